import type { RawProduct } from "../api/schemas.js";
import { indexEntriesOf } from "./index-entries.js";
import type { CatalogIndexEntry } from "./index-entry.js";
import { isOrderable } from "./orderable.js";
import { asString } from "./product-fields.js";

/** `5.00-500.00`, `10.00,25.00`, or for a subscription `PLAN-1M=9.99 PLAN-1Y=99.00`; `-` when unknown. */
function denominationsText(product: RawProduct): string {
  const entries = indexEntriesOf(product);
  if (product.payout_type === "subscription" && entries.length > 0) {
    return entries.map((e) => `${e.code}=${entryText(e)}`).join(" ");
  }
  return entries[0] ? entryText(entries[0]) : "-";
}

function entryText(entry: CatalogIndexEntry): string {
  const d = entry.denominations;
  if (!d) return "-";
  return d.type === "open" ? `${d.min}-${d.max}` : d.list.join(",");
}

/** Whether a product is shown for `--code C`: its own code or one of its plan codes. */
export function productHasCode(product: RawProduct, code: string): boolean {
  if (product.code === code) return true;
  return indexEntriesOf(product).some((entry) => entry.code === code);
}

/** The columns of `catalog show`. */
export function productRow(product: RawProduct): string[] {
  return [
    product.code,
    asString(product.name) ?? "",
    asString(product.payout_type) ?? "",
    asString(product.currency) ?? "",
    // Orderable as the import decides it (orderable.ts), not is_orderable alone.
    isOrderable(product) ? "yes" : "no",
    asString(product.state) ?? "",
    denominationsText(product),
  ];
}

export const PRODUCT_COLUMNS = [
  "CODE",
  "NAME",
  "TYPE",
  "CURRENCY",
  "ORDERABLE",
  "STATE",
  "DENOMINATIONS",
];

/**
 * Fixed widths so rows can be printed as they stream (the table may have 100k rows); long
 * values are cut with an ellipsis, the last column never.
 */
const WIDTHS = [22, 30, 12, 8, 9, 20];

export function tableLine(cells: string[]): string {
  return cells
    .map((cell, i) => {
      const width = WIDTHS[i];
      if (width === undefined) return cell;
      const fitted = cell.length > width ? `${cell.slice(0, width - 1)}…` : cell;
      return fitted.padEnd(width);
    })
    .join(" ");
}
