import { canonicalDecimal } from "../money.js";
import { sha256 } from "../sha256.js";
import type { OrderRow } from "./order-row.js";

/** What a fingerprint reads of a row: as read from a file (OrderRow) or kept in the ledger. */
export type PayeeRow = Pick<
  OrderRow,
  | "email"
  | "product_code"
  | "face_value"
  | "reference"
  | "recipient_reference"
  | "product_codes"
  | "selection_template_id"
>;

/**
 * Who a row pays: its e-mail (trimmed, lower-cased), else its recipient reference, else, on a
 * link row, its own `reference`. Undefined when the row names nobody (a link row without a
 * reference): such a row cannot repeat a person (docs/architecture/repeats.md).
 */
function payeeOf(row: PayeeRow): string | undefined {
  const email = row.email.trim().toLowerCase();
  if (email !== "") return `e:${email}`;
  if (row.recipient_reference !== undefined) return `r:${row.recipient_reference}`;
  if (row.reference !== undefined) return `l:${row.reference}`;
  return undefined;
}

/** What a row pays with: its product, its sorted choice of products, or its selection template. */
function productOf(row: PayeeRow): string {
  if (row.product_codes !== undefined) return `m:${[...row.product_codes].sort().join("|")}`;
  if (row.selection_template_id !== undefined) return `t:${row.selection_template_id}`;
  return `p:${row.product_code}`;
}

/**
 * The fingerprint of who a row pays what (docs/architecture/repeats.md): payee, product, face
 * value and currency, and nothing of the file it came from (its format, column order, headers,
 * --map, line, description or metadata), so the same rows exported otherwise give the same
 * fingerprints. A hash: the memory keeps no e-mail in clear. Undefined when the row names nobody.
 */
export function paidFingerprint(row: PayeeRow, currency: string): string | undefined {
  const payee = payeeOf(row);
  if (payee === undefined) return undefined;
  const fields = ["paid1", payee, productOf(row), canonicalDecimal(row.face_value), currency];
  return sha256(JSON.stringify(fields));
}
