import { currencyDecimals, toUnits } from "../money.js";
import { ApiError } from "./api-error.js";
import type { Catalog, Orderable } from "./catalog.js";
import type { NewProducts } from "./item-parts.js";

/**
 * The account's payout selection templates (OpenAPI PayoutSelectionTemplate): id -> the codes of
 * its products, kept by the service; none unless set (`selectionTemplates`,
 * POST /_sandbox/selection-templates).
 */
export class SelectionTemplates {
  private byId = new Map<string, string[]>();

  get(id: string): string[] | undefined {
    return this.byId.get(id);
  }

  /** Replaces them all; each needs two or more distinct codes (a RangeError otherwise). */
  replace(templates: Record<string, unknown>): void {
    const next = new Map<string, string[]>();
    for (const [id, codes] of Object.entries(templates)) {
      const ok =
        id !== "" &&
        Array.isArray(codes) &&
        codes.length >= 2 &&
        codes.every((code) => typeof code === "string" && code !== "") &&
        new Set(codes).size === codes.length;
      if (!ok) throw new RangeError(`template ${id}: two or more distinct product codes`);
      next.set(id, [...(codes as string[])]);
    }
    this.byId = next;
  }

  toJSON(): Record<string, string[]> {
    return Object.fromEntries(this.byId);
  }
}

/** A choice of products checked: its products, face value in units, and what it answers. */
export interface CheckedChoice {
  found: Orderable[];
  face: bigint;
  /** The item's `products` as the service answers it (a template's with its `values`). */
  answered:
    | { type: "MULTIPLE"; values: string[] }
    | { type: "TEMPLATE"; template_id: string; values: string[] };
}

/** The smallest face value a product takes, in units: minimum, lowest of its list, plan price. */
function minimumUnits(found: Orderable, scale: number): bigint | undefined {
  const units = (text: string) => toUnits(text, scale);
  if (found.plan) return units(found.plan.price);
  const list = found.product.gift_card?.denominations.available_list;
  if (list && list.length > 0) {
    let least: bigint | undefined;
    for (const value of list.map(units)) if (least === undefined || value < least) least = value;
    return least;
  }
  const denominations =
    found.product.gift_card?.denominations ?? found.product.payment?.denominations;
  return denominations ? units(denominations.minimum_value) : undefined;
}

/**
 * Checks a MULTIPLE or TEMPLATE item against the catalog (OpenAPI MultipleProduct: "All products
 * must use the same currency"; NewOrderItemDetails: a whole face value, not below the minimum of
 * the products). Every code must be orderable, in the payment currency.
 */
export function checkChoiceItem(
  catalog: Catalog,
  templates: SelectionTemplates,
  item: { face_value: number; products: Exclude<NewProducts, { type: "SINGLE" }> },
  index: number,
  currency: string,
): CheckedChoice {
  const fail = (why: string) => new ApiError("product_validation_error", `items[${index}]: ${why}`);
  const { products } = item;
  const codes =
    products.type === "MULTIPLE" ? products.values : templates.get(products.template_id);
  if (!codes) {
    const id = products.type === "TEMPLATE" ? products.template_id : "";
    throw fail(`payout selection template ${id} does not exist`);
  }
  const scale = currencyDecimals(currency);
  if (!Number.isSafeInteger(item.face_value)) throw fail("face value must be a whole number");
  const face = toUnits(String(item.face_value), scale);
  const found = codes.map((code) => {
    const orderable = catalog.resolve(code);
    if (!orderable) throw fail(`product ${code} does not exist`);
    const { product } = orderable;
    if (product.state !== "LIVE" && product.state !== "TEMPORARILY_DEGRADED")
      throw fail(`product ${code} is ${product.state}`);
    if (!product.is_orderable) throw fail(`product ${code} is not orderable`);
    if (product.subscription && !orderable.plan)
      throw fail(`product ${code} is a subscription: order one of its subscription_plan_code`);
    if (product.currency !== currency)
      throw new ApiError(
        "currency_mismatch",
        `items[${index}]: product ${code} is in ${product.currency}, payment is in ${currency}`,
      );
    const minimum = minimumUnits(orderable, scale);
    if (minimum !== undefined && face < minimum)
      throw fail(`face value must be at least the minimum of ${code}`);
    return orderable;
  });
  const answered: CheckedChoice["answered"] =
    products.type === "MULTIPLE"
      ? { type: "MULTIPLE", values: [...codes] }
      : { type: "TEMPLATE", template_id: products.template_id, values: [...codes] };
  return { found, face, answered };
}
