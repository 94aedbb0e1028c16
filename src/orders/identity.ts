import { hash } from "node:crypto";
import { canonicalDecimal } from "../money.js";
import { sha256 } from "../sha256.js";
import { DigestTable } from "./digest-table.js";
import type { OrderRow } from "./order-row.js";

function sortedMetadata(row: OrderRow): [string, string][] {
  return Object.entries(row.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * What a row holds beyond an e-mail row of one product (its distribution, recipient reference,
 * product choice, a template row's currency), under short names; undefined for such a row, whose
 * hashes then stay byte for byte what they were before these fields existed. Product codes are
 * sorted: the same choice written in another order is the same card. `withDefaults`: a currency
 * taken from `--currency` counts (payload hash), as the default template does.
 */
function extrasOf(row: OrderRow, withDefaults: boolean): Record<string, unknown> | undefined {
  const extras: Record<string, unknown> = {};
  if (row.distribution !== undefined) extras.d = row.distribution;
  if (row.recipient_reference !== undefined) extras.r = row.recipient_reference;
  if (row.product_codes !== undefined) extras.m = [...row.product_codes].sort();
  if (row.selection_template_id !== undefined) {
    extras.t = row.selection_template_id;
    if (row.currency !== undefined && (withDefaults || row.currency_source === "row"))
      extras.c = row.currency;
  }
  return Object.keys(extras).length > 0 ? extras : undefined;
}

/**
 * The row's content in one spelling: e-mail trimmed and lowercased, face value canonical
 * ("10.50" == "10.5"), metadata sorted. A JSON array keeps fields from running into each other.
 */
function normalise(row: OrderRow, templateId: string | undefined, withDefaults: boolean): string {
  const fields: unknown[] = [
    "v1",
    row.email.trim().toLowerCase(),
    row.product_code,
    canonicalDecimal(row.face_value),
    templateId ?? "",
    row.description ?? "",
    sortedMetadata(row),
  ];
  const extras = extrasOf(row, withDefaults);
  if (extras !== undefined) fields.push(extras);
  return JSON.stringify(fields);
}

/**
 * Hash of what the file says about the card (reference excluded; only a template, or a
 * template row's currency, the row itself names). Identical rows share it; the occurrence index
 * then tells them apart.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function contentHash(row: OrderRow): string {
  const own = row.template_source === "row" ? row.template_id : undefined;
  return sha256(normalise(row, own, false));
}

/**
 * Hash of what would be sent for the row (the default template and currency included). The
 * ledger keeps it per identity: a different hash under the same reference is a changed row, a
 * conflict. An import takes it from identityAndPayload.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function payloadHash(row: OrderRow): string {
  return sha256(normalise(row, row.template_id, true));
}

/**
 * A row's identity and payload hash (rowIdentity, payloadHash) with each distinct text hashed
 * once: for most rows (no default template, no template row's default currency) the two hashes
 * are of the same text, and an import hashes a million rows.
 */
export function identityAndPayload(
  row: OrderRow,
  occurrences: OccurrenceCounter,
): { identity: string; payload: string } {
  if (row.reference !== undefined)
    return { identity: rowIdentity(row, occurrences), payload: payloadHash(row) };
  const payloadText = normalise(row, row.template_id, true);
  const payload = sha256(payloadText);
  const own = row.template_source === "row" ? row.template_id : undefined;
  const contentText = normalise(row, own, false);
  const content = contentText === payloadText ? payload : sha256(contentText);
  return { identity: `h:${content}.${occurrences.next(content)}`, payload };
}

/**
 * Counts each content hash as rows go by: the first identical row is #0, the second #1, so two
 * identical rows are two deliberate cards. Memory is O(distinct rows), 40 to 80 bytes each,
 * off the JS heap.
 */
export class OccurrenceCounter {
  private readonly counts = new DigestTable();

  /** `hash` is a content hash (base64url SHA-256). */
  next(hash: string): number {
    return this.counts.increment(Buffer.from(hash, "base64url"));
  }

  /** Rows counted so far (of distinct content). */
  get size(): number {
    return this.counts.size;
  }

  /** Makes room for `count` distinct contents in all (DigestTable.reserve). */
  reserve(count: number): void {
    this.counts.reserve(count);
  }
}

/**
 * The two shapes rowIdentity gives whose 43 characters are a SHA-256 digest's base64url exactly
 * (its last character carries 2 unused bits, so only these 16 end one): `ref:DIGEST` and
 * `h:DIGEST.N`. The paid index holds such a digest as its 32 bytes (paid-index.ts).
 */
export const REF_IDENTITY = /^ref:[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;
export const CONTENT_IDENTITY = /^h:[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]\.[0-9]+$/;

/**
 * A row's identity in the campaign ledger: `ref:` + hash of its reference when it has one,
 * else `h:` + its content hash + `.` + occurrence index. Both are hashes: the ledger lives in
 * Redis and holds no e-mail or reference in clear. Same file, any row order -> same identities,
 * as long as identical rows without reference keep their relative order (they are
 * interchangeable, so it does not matter which is #0). An import takes it from identityAndPayload.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function rowIdentity(row: OrderRow, occurrences: OccurrenceCounter): string {
  if (row.reference !== undefined)
    return `ref:${referenceDigest(row.reference).toString("base64url")}`;
  const hash = contentHash(row);
  return `h:${hash}.${occurrences.next(hash)}`;
}

let lastReference: string | undefined;
let lastDigest = Buffer.alloc(0);

/**
 * SHA-256 of `ref\n` + a reference: what its row's identity is made of, and what the file's
 * reference check keys on (validation/reference-tracker.ts). The row's validation asks first and
 * its identity right after, so the last answer is kept: a reference is hashed once.
 */
export function referenceDigest(reference: string): Buffer {
  if (reference !== lastReference) {
    lastDigest = hash("sha256", `ref\n${reference}`, "buffer");
    lastReference = reference;
  }
  return lastDigest;
}
