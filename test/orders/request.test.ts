import { describe, expect, it } from "vitest";
import { decodeOrder, decodeRow, encodeOrder, encodeRow } from "../../src/ledger/codec.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import { orderOwnParts, requestFromLedger } from "../../src/orders/request.js";
import { row } from "../helpers/csv.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { buildOrderRequest } from "../helpers/order-body.js";

describe("buildOrderRequest", () => {
  it("puts a single row's description and metadata on the order, keys sorted", () => {
    const body = buildOrderRequest(
      [
        row({
          face_value: "10.50",
          template_id: "T1",
          template_source: "row",
          description: "Happy birthday",
          metadata: { z: "1", a: "2" },
        }),
      ],
      "USD",
      { name: "spring" },
    );
    expect(body).toEqual({
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
      items: [
        {
          face_value: 10.5,
          distribution_method: {
            type: "EMAIL",
            email_address: "jane@example.com",
            template_id: "T1",
          },
          products: { type: "SINGLE", value: "AMZ-US" },
        },
      ],
      description: "Happy birthday",
      metadata: { a: "2", z: "1" },
    });
    expect(JSON.stringify(body)).toContain('"metadata":{"a":"2","z":"1"}');
  });

  it("leaves out what a row does not have", () => {
    const body = buildOrderRequest([row()], "USD", { name: "spring" });
    expect(body).toEqual({
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
      items: [
        {
          face_value: 25,
          distribution_method: { type: "EMAIL", email_address: "jane@example.com" },
          products: { type: "SINGLE", value: "AMZ-US" },
        },
      ],
    });
  });

  it("gives a multi-row order the campaign's description and metadata", () => {
    const rows = [row({ description: "mine", metadata: { k: "v" } }), row({ face_value: "0.125" })];
    const body = buildOrderRequest(rows, "KWD", { name: "spring" });
    expect(body.description).toBe("giftjobs campaign spring");
    expect(body.metadata).toEqual({ campaign: "spring" });
    expect(body.items.map((i) => i.face_value)).toEqual([25, 0.125]);
    expect(
      buildOrderRequest(rows, "KWD", { name: "s", description: "d".repeat(300) }).description,
    ).toHaveLength(128);
    expect(() => buildOrderRequest(rows, "KWD", { name: "n".repeat(201) })).toThrow(
      /campaign name/,
    );
  });

  it("sends face values as exact JSON numbers, and refuses what cannot be", () => {
    for (const [text, json] of [
      ["10.50", "10.5"],
      ["0.1", "0.1"],
      ["999999.999", "999999.999"],
      ["100.00", "100"],
    ]) {
      const body = buildOrderRequest([row({ face_value: text })], "USD", { name: "c" });
      expect(JSON.stringify(body.items[0]?.face_value)).toBe(json);
    }
    expect(() =>
      buildOrderRequest([row({ face_value: "12345678901234567890" })], "USD", { name: "c" }),
    ).toThrow(RangeError);
  });

  it("holds 1 to 200 rows", () => {
    expect(() => buildOrderRequest([], "USD", { name: "c" })).toThrow(RangeError);
    expect(() => buildOrderRequest(Array(201).fill(row()), "USD", { name: "c" })).toThrow(
      RangeError,
    );
    expect(buildOrderRequest(Array(200).fill(row()), "USD", { name: "c" }).items).toHaveLength(200);
  });
});

describe("requestFromLedger", () => {
  /** What import records for these rows (see BatchPreparer.place), and the body it made. */
  function recorded(rows: OrderRow[]) {
    const made = buildOrderRequest(rows, "USD", { name: "spring" });
    const identities = rows.map((_, i) => `id${i}`);
    const order = {
      ...ledgerOrder("spring", identities),
      ...(made.description !== undefined ? { description: made.description } : {}),
      ...(made.metadata !== undefined ? { metadata: made.metadata } : {}),
    };
    const ledgerRows = rows.map((r, i) => ({
      ...ledgerRow(i + 2, {
        email: r.email,
        product_code: r.product_code,
        face_value: r.face_value,
        ...(r.template_id !== undefined ? { template_id: r.template_id } : {}),
      }),
      order: 1,
    }));
    return { made, order, ledgerRows };
  }

  it("makes, from the ledger's records, the very body import made: one row with its own parts", () => {
    const { made, order, ledgerRows } = recorded([
      row({
        face_value: "10.50",
        template_id: "T1",
        template_source: "row",
        description: "Happy birthday",
        metadata: { z: "1", a: "2" },
      }),
    ]);
    const body = requestFromLedger(order, ledgerRows);
    expect(JSON.stringify(body)).toBe(JSON.stringify(made));
  });

  it("and for a packed order, through the stored form (codec) and back", () => {
    const { made, order, ledgerRows } = recorded([
      row({ email: "a@example.com", face_value: "5" }),
      row({ email: "b@example.com", face_value: "25.00", template_id: "T2" }),
      row({ email: "c@example.com", metadata: { dept: "x" } }),
    ]);
    const stored = ledgerRows.map((r) => decodeRow(encodeRow(r)));
    const context = { campaign: "spring", mode: "async" as const };
    const body = requestFromLedger(decodeOrder(encodeOrder(order, context), context), stored);
    expect(JSON.stringify(body)).toBe(JSON.stringify(made));
    expect(made.items).toHaveLength(3);
  });

  it("and for tagged orders, whose tags the stored form does not hold", () => {
    const context = { campaign: "spring" };
    for (const rows of [
      [row({ metadata: { z: "1", a: "2" } })],
      [row(), row({ email: "b@example.com" })],
    ]) {
      const identities = rows.map((_, i) => `id${i}`);
      const order = ledgerOrder("spring", identities);
      const made = buildOrderRequest(rows, "USD", { name: "spring", tagKey: order.key });
      const tagged = { ...order, metadata: made.metadata! };
      if (made.description !== undefined) Object.assign(tagged, { description: made.description });
      const text = encodeOrder(tagged, context);
      expect(text).not.toContain("giftjobs_");
      const ledgerRows = rows.map((r, i) => ({
        ...ledgerRow(i + 2, {
          email: r.email,
          product_code: r.product_code,
          face_value: r.face_value,
        }),
        order: 1,
      }));
      const body = requestFromLedger(decodeOrder(text, context), ledgerRows);
      expect(JSON.stringify(body)).toBe(JSON.stringify(made));
    }
  });

  it("refuses to make a body with a row missing", () => {
    const { order, ledgerRows } = recorded([row(), row({ email: "b@example.com" })]);
    expect(() => requestFromLedger(order, [ledgerRows[0], undefined])).toThrow(/id1 is missing/);
  });
});

describe("an order's metadata keys", () => {
  it("come in Array.prototype.sort's order, however many and whatever they hold", () => {
    const names = ["z", "a", "B", "é", "aa", "", "Z", "a b", "😀", "ab", "Ä", "_", "-", "10", "9"];
    for (const count of [1, 2, 3, 5, 8, 15, 16, 17]) {
      const metadata = Object.fromEntries(
        Array.from({ length: count }, (_, i) => [`${names[i % names.length]}${i}`, String(i)]),
      );
      const parts = orderOwnParts([row({ metadata })], { name: "spring" });
      const sorted = Object.fromEntries(
        Object.keys(metadata)
          .sort()
          .map((k) => [k, metadata[k]]),
      );
      expect(JSON.stringify(parts.metadata), `${count} keys`).toBe(JSON.stringify(sorted));
    }
  });
});
