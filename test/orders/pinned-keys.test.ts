// Today's identities, keys, bodies and ledger rows of e-mail rows of one product, pinned as
// literals: campaigns recorded before distribution methods and product choices existed must keep
// their keys byte for byte (docs/architecture/keys-and-exactly-once.md, "Identities, keys and
// generations"). A change here re-keys every existing campaign: never update these to pass.
// `row` is the ledger row as giftjobs wrote it before its payload hash was kept to 12 characters
// (docs/architecture/ledger.md, "What a row costs"): such rows are still read, and give the same
// body; `stored` is the row as it is written now.
import { describe, expect, it } from "vitest";
import { ledgerRow } from "../../src/import/batch-preparer.js";
import { validateRow } from "../../src/import/validation/row-validation.js";
import { decodeRow, encodeRow, samePayload } from "../../src/ledger/codec.js";
import type { LedgerOrder, LedgerRow } from "../../src/ledger/types.js";
import {
  contentHash,
  OccurrenceCounter,
  payloadHash,
  rowIdentity,
} from "../../src/orders/identity.js";
import { orderKey } from "../../src/orders/keys.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { buildOrderRequest } from "../helpers/order-body.js";

const FIELDS: Record<string, string>[] = [
  {
    email: "Jane.Doe@Example.com",
    product_code: "AMZ-US",
    face_value: "25.50",
    template_id: "",
    description: "thanks",
    reference: "",
    "metadata.team": "ops",
  },
  {
    email: "john@example.com",
    product_code: "AMZ-US",
    face_value: "10",
    template_id: "TPL-9",
    reference: "EMP-42",
  },
];

const PINNED = [
  {
    identity: "h:Kt2uDBwovpdxCEJH2tgxxf2AplwkkBixjZVy3uVuxeU.0",
    content: "Kt2uDBwovpdxCEJH2tgxxf2AplwkkBixjZVy3uVuxeU",
    payload: "mZFXzv3Jkpz_UAo-fZRqVLUkNKGh6m2_jyTf1L0fFkI",
    key: "gj1_fEodYq2MhPCLHAz1ESg7jg5xM0E1fZ4xgj3bZ7f_YBA",
    body:
      '{"payment_method":{"type":"ACCOUNT_BALANCE","currency":"USD"},"items":[{"face_value":25.5,' +
      '"distribution_method":{"type":"EMAIL","email_address":"Jane.Doe@Example.com",' +
      '"template_id":"TPL-D"},"products":{"type":"SINGLE","value":"AMZ-US"}}],' +
      '"description":"thanks","metadata":{"team":"ops"}}',
    row: '[2,1,0,"mZFXzv3Jkpz_UAo-","Jane.Doe@Example.com","AMZ-US","25.50","USD","","TPL-D"]',
    stored: '[2,1,0,"mZFXzv3Jkpz_","Jane.Doe@Example.com","AMZ-US","25.50","USD","","TPL-D"]',
  },
  {
    identity: "ref:zgBw7YqMDVTMukdKH_QvSjqaW0o-cGpGorR4mkYt97I",
    content: "-kZTHarvR-IhZ0JivDNO7UZjjgU0MElLDiY6Z9oXBWs",
    payload: "-kZTHarvR-IhZ0JivDNO7UZjjgU0MElLDiY6Z9oXBWs",
    key: "gj1_Bash8gtYHX3cRPoShYOBTWNpsIMjtmtzEDM9tjaO8to",
    body:
      '{"payment_method":{"type":"ACCOUNT_BALANCE","currency":"USD"},"items":[{"face_value":10,' +
      '"distribution_method":{"type":"EMAIL","email_address":"john@example.com",' +
      '"template_id":"TPL-9"},"products":{"type":"SINGLE","value":"AMZ-US"}}]}',
    row: '[3,1,0,"-kZTHarvR-IhZ0Ji","john@example.com","AMZ-US","10","USD","EMP-42","TPL-9"]',
    stored: '[3,1,0,"-kZTHarvR-Ih","john@example.com","AMZ-US","10","USD","EMP-42","TPL-9"]',
  },
];

const PACKED_KEY = "gj1_n178x5H-inHCxxoWKiLSKNaCHEq6WNZAKVZp8QnV3vo";
const PACKED_BODY =
  '{"payment_method":{"type":"ACCOUNT_BALANCE","currency":"USD"},"items":[{"face_value":25.5,' +
  '"distribution_method":{"type":"EMAIL","email_address":"Jane.Doe@Example.com",' +
  '"template_id":"TPL-D"},"products":{"type":"SINGLE","value":"AMZ-US"}},{"face_value":10,' +
  '"distribution_method":{"type":"EMAIL","email_address":"john@example.com",' +
  '"template_id":"TPL-9"},"products":{"type":"SINGLE","value":"AMZ-US"}}],' +
  '"description":"giftjobs campaign spring","metadata":{"campaign":"spring"}}';

function rowsOfToday(): { row: OrderRow; identity: string }[] {
  const occurrences = new OccurrenceCounter();
  return FIELDS.map((fields, i) => {
    const checked = validateRow({ line: i + 2, fields }, { defaultTemplateId: "TPL-D" });
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    return { row: checked.row, identity: rowIdentity(checked.row, occurrences) };
  });
}

/** The ledger row as the import records it for an e-mail row of one product. */
function ledgerRowOf(row: OrderRow): LedgerRow {
  return {
    line: row.line,
    order: 1,
    generation: 0,
    payload_hash: payloadHash(row),
    email: row.email,
    product_code: row.product_code,
    face_value: row.face_value,
    currency: "USD",
    ...(row.reference !== undefined ? { reference: row.reference } : {}),
    ...(row.template_id !== undefined ? { template_id: row.template_id } : {}),
  };
}

describe("keys of e-mail rows of one product, as they were", () => {
  it("keeps each row's identity, hashes, key, body and stored row byte for byte", () => {
    for (const [i, { row, identity }] of rowsOfToday().entries()) {
      const pinned = PINNED[i]!;
      expect(identity).toBe(pinned.identity);
      expect(contentHash(row)).toBe(pinned.content);
      expect(payloadHash(row)).toBe(pinned.payload);
      expect(orderKey("spring", 0, [identity])).toBe(pinned.key);
      expect(JSON.stringify(buildOrderRequest([row], "USD", { name: "spring" }))).toBe(pinned.body);
      const stored = encodeRow(ledgerRowOf(row));
      expect(stored).toBe(pinned.stored);
      // The import's own ledger row, as BatchPreparer makes it.
      const spooled = {
        kind: "new" as const,
        identity,
        payload: payloadHash(row),
        currency: "USD",
      };
      const written = ledgerRow({ ...spooled, face: "0", price: "0", row }, 0);
      expect(encodeRow({ ...written, order: 1 })).toBe(pinned.stored);
      const body = buildOrderRequest([row], "USD", { name: "spring" });
      const order: LedgerOrder = {
        key: pinned.key,
        identities: [identity],
        generation: 0,
        status: "queued",
        currency: "USD",
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      };
      expect(JSON.stringify(requestFromLedger(order, [decodeRow(stored)]))).toBe(pinned.body);
      // The row as written before: the same row but for its longer hash, the same body.
      const before = decodeRow(pinned.row);
      expect({ ...before, payload_hash: "" }).toEqual({ ...decodeRow(stored), payload_hash: "" });
      expect(samePayload(before.payload_hash, payloadHash(row))).toBe(true);
      expect(samePayload(decodeRow(stored).payload_hash, payloadHash(row))).toBe(true);
      expect(JSON.stringify(requestFromLedger(order, [before]))).toBe(pinned.body);
    }
  });

  it("keeps a packed order's key and body", () => {
    const rows = rowsOfToday().sort((a, b) => (a.identity < b.identity ? -1 : 1));
    expect(
      orderKey(
        "spring",
        0,
        rows.map((r) => r.identity),
      ),
    ).toBe(PACKED_KEY);
    const body = buildOrderRequest(
      rows.map((r) => r.row),
      "USD",
      { name: "spring" },
    );
    expect(JSON.stringify(body)).toBe(PACKED_BODY);
  });
});
