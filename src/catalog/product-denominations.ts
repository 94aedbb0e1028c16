import { compareDecimal } from "../money.js";
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
  return readDenominations(asRecord(product[payoutType])?.denominations);
}

/**
 * A product's `denominations` object as the service writes it (OpenAPI ProductDenominations:
 * `type`, `minimum_value`, `maximum_value`, `available_list`), or null when it cannot be read.
 */
export function readDenominations(value: unknown): Denominations {
  const raw = asRecord(value);
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

/** Whether `denominations` take `faceValue` (a plain decimal): open min..max, or one of fixed. */
export function allowsFaceValue(denominations: Denominations, faceValue: string): boolean {
  if (denominations === null) return false;
  if (denominations.type === "open") {
    return (
      compareDecimal(faceValue, denominations.min) >= 0 &&
      compareDecimal(faceValue, denominations.max) <= 0
    );
  }
  return denominations.list.some((value) => compareDecimal(faceValue, value) === 0);
}

/** The denominations as a message shows them: `10.00..500.00` or `10.00, 25.00`. */
export function denominationsText(denominations: Denominations): string {
  if (denominations === null) return "none giftjobs can read";
  return denominations.type === "open"
    ? `${denominations.min}..${denominations.max}`
    : denominations.list.join(", ");
}
