import type { RawProduct } from "../api/schemas.js";
import { type Denominations, denominationsOf } from "./product-denominations.js";
import { asStringList, subscriptionPlans } from "./product-fields.js";

/** The fields a diff reports on, in the order they are listed. */
export const DIFF_FIELDS = [
  "name",
  "payout_type",
  "is_orderable",
  "state",
  "availability",
  "currency",
  "discount_multiplier",
  "denominations",
  "countries_redeemable_in",
] as const;

export type DiffField = (typeof DIFF_FIELDS)[number];

/** A subscription's denominations are its plans: a plan added, removed or repriced is a change. */
export type RecordDenominations =
  | Denominations
  | { type: "plans"; plans: { code: string; price: string }[] };

/**
 * What the diff keeps of a product: a few hundred bytes instead of kilobytes, so that the
 * previous snapshot of 100k products fits in memory as one string per code.
 */
export type CompactRecord = { code: string } & Record<DiffField, unknown>;

export function compactRecordOf(product: RawProduct): CompactRecord {
  const countries = asStringList(product.countries_redeemable_in);
  return {
    code: product.code,
    name: product.name ?? null,
    payout_type: product.payout_type ?? null,
    is_orderable: product.is_orderable ?? null,
    state: product.state ?? null,
    availability: product.availability ?? null,
    currency: product.currency ?? null,
    discount_multiplier: product.discount_multiplier ?? null,
    denominations: recordDenominations(product),
    // The order of countries carries no meaning; sort so a reordering is not reported.
    countries_redeemable_in: countries
      ? [...countries].sort()
      : (product.countries_redeemable_in ?? null),
  };
}

function recordDenominations(product: RawProduct): RecordDenominations {
  if (product.payout_type === "subscription") {
    return {
      type: "plans",
      plans: subscriptionPlans(product).map(({ code, price }) => ({ code, price })),
    };
  }
  return denominationsOf(product);
}
