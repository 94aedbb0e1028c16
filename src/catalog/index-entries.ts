import type { RawProduct } from "../api/schemas.js";
import type { CatalogIndexEntry } from "./index-entry.js";
import { denominationsOf } from "./product-denominations.js";
import { asString, asStringList, subscriptionPlans } from "./product-fields.js";

/**
 * The index entries of one product. A subscription is ordered by its plan codes, so each plan
 * is an entry with the fixed denomination [price]; other types are one entry by product code.
 * A product with `problems` gets denominations null, which preflight refuses.
 */
export function indexEntriesOf(product: RawProduct, problems: string[] = []): CatalogIndexEntry[] {
  const base: CatalogIndexEntry = {
    code: product.code,
    name: asString(product.name) ?? "",
    payout_type: asString(product.payout_type) ?? "",
    is_orderable: product.is_orderable === true,
    state: asString(product.state) ?? "",
    availability: asString(product.availability) ?? null,
    currency: asString(product.currency) ?? "",
    // Sorted: their order means nothing, and the diff must not see a reordering as a change.
    countries: [...(asStringList(product.countries_redeemable_in) ?? [])].sort(),
    denominations: null,
    discount_multiplier: asString(product.discount_multiplier) ?? "0",
  };
  if (problems.length > 0) return [{ ...base, problems }];
  if (base.payout_type === "subscription") {
    return subscriptionPlans(product).map((plan) => ({
      ...base,
      code: plan.code,
      name: plan.name ? `${base.name} - ${plan.name}` : base.name,
      denominations: { type: "fixed", list: [plan.price] },
      plan_of: product.code,
    }));
  }
  // Filled in place: one object per product rather than a copy of `base` each.
  base.denominations = denominationsOf(product);
  return [base];
}
