// Rows sent other than by e-mail to one product: their item bodies (the OpenAPI's
// LinkDistribution, RecipientDistribution, MultipleProduct, PayoutSelectionTemplate), their
// identities and hashes, and their ledger rows through the stored form and back.
import { describe, expect, it } from "vitest";
import { ledgerRow } from "../../src/import/batch-preparer.js";
import { decodeRow, encodeRow } from "../../src/ledger/codec.js";
import type { LedgerOrder } from "../../src/ledger/types.js";
import { contentHash, payloadHash } from "../../src/orders/identity.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { row } from "../helpers/csv.js";
import { buildOrderRequest } from "../helpers/order-body.js";

const LINK = row({ email: "", distribution: "link" });
const RECIPIENT = row({ distribution: "recipient", recipient_reference: "emp.42@acme" });
const MULTIPLE = row({ product_code: "", product_codes: ["B-US", "A-US"], face_value: "20" });
const TEMPLATE = row({
  product_code: "",
  selection_template_id: "PT-01",
  currency: "USD",
  currency_source: "row",
  face_value: "20",
});

function itemOf(r: OrderRow) {
  return buildOrderRequest([r], "USD", { name: "c" }).items[0]!;
}

/** The body the import makes, and the body made again from the stored rows (codec and back). */
function bothBodies(rows: OrderRow[]) {
  const made = buildOrderRequest(rows, "USD", { name: "c" });
  const stored = rows.map((r, i) => {
    const payload = payloadHash(r);
    const spooled = { kind: "new" as const, identity: `id${i}`, payload, currency: "USD" };
    const recorded = ledgerRow({ ...spooled, face: "0", price: "0", row: r }, 0);
    return decodeRow(encodeRow({ ...recorded, order: 1 }));
  });
  const order: LedgerOrder = {
    key: "k",
    identities: rows.map((_, i) => `id${i}`),
    generation: 0,
    status: "queued",
    currency: "USD",
    ...(made.description !== undefined ? { description: made.description } : {}),
    ...(made.metadata !== undefined ? { metadata: made.metadata } : {}),
  };
  return { made, again: requestFromLedger(order, stored), stored };
}

describe("items other than by e-mail to one product", () => {
  it("sends a link row as PAYOUT_LINK with no e-mail", () => {
    expect(itemOf(LINK).distribution_method).toEqual({ type: "PAYOUT_LINK" });
    expect(itemOf({ ...LINK, template_id: "T1" }).distribution_method).toEqual({
      type: "PAYOUT_LINK",
      template_id: "T1",
    });
  });

  it("sends a recipient row with its reference and e-mail", () => {
    expect(JSON.stringify(itemOf(RECIPIENT).distribution_method)).toBe(
      '{"type":"RECIPIENT","recipient_reference":"emp.42@acme","email_address":"jane@example.com"}',
    );
  });

  it("sends a choice as MULTIPLE (codes as written) or TEMPLATE", () => {
    expect(itemOf(MULTIPLE).products).toEqual({ type: "MULTIPLE", values: ["B-US", "A-US"] });
    expect(itemOf(TEMPLATE).products).toEqual({ type: "TEMPLATE", template_id: "PT-01" });
    expect(itemOf(TEMPLATE).distribution_method).toEqual({
      type: "EMAIL",
      email_address: "jane@example.com",
    });
  });

  it("makes the same body again from the ledger, and keeps only what a row has", () => {
    const rows = [LINK, RECIPIENT, MULTIPLE, TEMPLATE, row({ template_id: "T9" })];
    const { made, again, stored } = bothBodies(rows);
    expect(JSON.stringify(again)).toBe(JSON.stringify(made));
    expect(stored[0]).not.toHaveProperty("product_codes");
    expect(stored[2]!.product_codes).toEqual(["B-US", "A-US"]);
    expect(stored[3]!.selection_template_id).toBe("PT-01");
    expect(stored[4]).not.toHaveProperty("distribution");
    expect(encodeRow({ ...stored[4]!, order: 1 })).not.toContain("{");
  });

  it("gives each kind its own identity, and a choice in any order the same", () => {
    const hashes = [row(), LINK, RECIPIENT, MULTIPLE, TEMPLATE].map(contentHash);
    expect(new Set(hashes).size).toBe(5);
    const reordered = { ...MULTIPLE, product_codes: ["A-US", "B-US"] };
    expect(contentHash(reordered)).toBe(contentHash(MULTIPLE));
    expect(payloadHash(reordered)).toBe(payloadHash(MULTIPLE));
  });

  it("keeps a template row's --currency out of its identity but in its payload hash", () => {
    const fromFlag = { ...TEMPLATE, currency_source: "default" as const };
    const otherFlag = { ...fromFlag, currency: "EUR" };
    expect(contentHash(otherFlag)).toBe(contentHash(fromFlag));
    expect(payloadHash(otherFlag)).not.toBe(payloadHash(fromFlag));
    expect(contentHash({ ...TEMPLATE, currency: "EUR" })).not.toBe(contentHash(TEMPLATE));
  });

  it("leaves a currency cell out of a one-product row's identity", () => {
    const withCell = row({ currency: "USD", currency_source: "row" });
    expect(contentHash(withCell)).toBe(contentHash(row()));
    expect(payloadHash(withCell)).toBe(payloadHash(row()));
  });
});
