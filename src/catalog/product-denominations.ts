import type { CatalogIndexEntry } from "./index-entry.js";
import { asRecord, asString, asStringList } from "./product-fields.js";

export type Denominations = CatalogIndexEntry["denominations"];

/**
 * The denominations of a gift_card or payment product, or null when they cannot be read.
 * Payment products carry min/max with no `type`, so a missing type is inferred from the fields.
 */
export function denominationsOf(product: Record<string, unknown>): Denominations {
  const payoutType = asString(product.payout_type);
  if (payoutType !== "gift_card" && payoutType !== "payment") return null;
  const raw = asRecord(asRecord(product[payoutType])?.denominations);
  if (!raw) return null;
  const type = asString(raw.type);
  const list = asStringList(raw.available_list);
  const min = asString(raw.minimum_value);
  const max = asString(raw.maximum_value);
  if (type === "fixed" || (type === undefined && list && list.length > 0)) {
    return list && list.length > 0 ? { type: "fixed", list } : null;
  }
  if (type === "open" || type === undefined) {
    return min !== undefined && max !== undefined ? { type: "open", min, max } : null;
  }
  // A denomination type we do not know: refuse rather than guess.
  return null;
}
