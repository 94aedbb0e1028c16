import { describe, expect, it } from "vitest";
import { buildOrderRequest } from "../../src/orders/order-request.js";
import { row } from "../helpers/csv.js";

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
