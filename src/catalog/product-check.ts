import { productProblems } from "../api/schemas.js";

/**
 * productProblems for the sync's hot path. Whether a product is fine is decided by hand, field
 * by field, exactly as ProductCoreSchema decides it; only a product that is not fine goes
 * through the schema, which words its problems. Almost every product is fine, and the schema
 * costs about 4 µs a product (0.4 s of a 100k sync) where this costs a tenth of that.
 * test/catalog/product-check.test.ts holds the two to the same verdicts.
 */
export function catalogProductProblems(product: unknown): string[] {
  return isCoreValid(product) ? [] : productProblems(product);
}

// The same patterns as src/api/schemas.ts.
const DECIMAL = /^\d+(\.\d+)?$/;
const CURRENCY = /^[A-Z]{3}$/;

/**
 * Whether ProductCoreSchema accepts `value`.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function isCoreValid(value: unknown): boolean {
  if (!isObject(value)) return false;
  const p = value;
  return (
    typeof p.code === "string" &&
    p.code.length >= 1 &&
    typeof p.name === "string" &&
    typeof p.currency === "string" &&
    CURRENCY.test(p.currency) &&
    typeof p.is_orderable === "boolean" &&
    typeof p.state === "string" &&
    typeof p.payout_type === "string" &&
    isStringArray(p.countries_redeemable_in) &&
    (isNullish(p.discount_multiplier) || isDecimal(p.discount_multiplier)) &&
    isNullishOrDenominated(p.gift_card) &&
    isNullishOrDenominated(p.payment) &&
    isNullishOrSubscription(p.subscription)
  );
}

/** What zod's object schemas accept: a non-null object that is not an array. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNullish(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function isDecimal(value: unknown): boolean {
  return typeof value === "string" && DECIMAL.test(value);
}

function isStringArray(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== "string") return false;
  return true;
}

function isNullishOrDenominated(value: unknown): boolean {
  if (isNullish(value)) return true;
  if (!isObject(value)) return false;
  const d = value.denominations;
  if (!isObject(d)) return false;
  if (!isNullish(d.type) && typeof d.type !== "string") return false;
  if (!isNullish(d.available_list)) {
    if (!Array.isArray(d.available_list)) return false;
    for (const item of d.available_list) if (!isDecimal(item)) return false;
  }
  return (
    (isNullish(d.minimum_value) || isDecimal(d.minimum_value)) &&
    (isNullish(d.maximum_value) || isDecimal(d.maximum_value))
  );
}

function isNullishOrSubscription(value: unknown): boolean {
  if (isNullish(value)) return true;
  if (!isObject(value)) return false;
  const plans = value.subscription_plans;
  if (!Array.isArray(plans)) return false;
  for (const plan of plans) {
    if (!isObject(plan)) return false;
    const code = plan.subscription_plan_code;
    if (typeof code !== "string" || code.length < 1) return false;
    if (!isDecimal(plan.price)) return false;
    if (!isNullish(plan.name) && typeof plan.name !== "string") return false;
  }
  return true;
}
