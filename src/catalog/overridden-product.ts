import type { RawProduct } from "../api/schemas.js";
import { isNewerThan, type ProductOverride, type ProductOverrideMap } from "./product-overrides.js";

/** What a product.update newer than the snapshot changed of a product `catalog show` prints. */
interface ProductUpdateNote {
  /** The message's timestamp. */
  timestamp: string;
  /** The fields it changed: is_orderable, discount_multiplier, denominations. */
  changed: string[];
}

/** A product as the import sees it now, and what a product.update changed of it (if anything). */
export interface ShownProduct {
  product: RawProduct;
  update?: ProductUpdateNote;
}

/** The payout objects whose denominations a pushed state replaces (a plan keeps its price). */
const DENOMINATED = ["gift_card", "payment"] as const;

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * `product` with `override` laid over it as applyProductOverrides lays it over an index entry:
 * `is_orderable`, `discount_multiplier` (the message's `price_multiplier`) and, when the message
 * carries them, the denominations of its gift card or payment. `state` stays the snapshot's (a
 * product.update does not carry it). The snapshot's product is not changed.
 */
function overriddenProduct(product: RawProduct, override: ProductOverride): ShownProduct {
  const { state } = override;
  const out: RawProduct = { ...product };
  const changed: string[] = [];
  if (product.is_orderable !== state.is_orderable) {
    out.is_orderable = state.is_orderable;
    changed.push("is_orderable");
  }
  if (product.discount_multiplier !== state.price_multiplier) {
    out.discount_multiplier = state.price_multiplier;
    changed.push("discount_multiplier");
  }
  if (state.denominations) {
    for (const field of DENOMINATED) {
      const payout = product[field];
      if (typeof payout !== "object" || payout === null) continue;
      const own = (payout as Record<string, unknown>).denominations;
      if (sameJson(own, state.denominations)) continue;
      out[field] = { ...payout, denominations: state.denominations };
      changed.push("denominations");
    }
  }
  if (changed.length === 0) return { product };
  return { product: out, update: { timestamp: override.timestamp, changed } };
}

/**
 * Lays over each product the pushed state newer than the snapshot fetched at `fetchedAt`
 * (isNewerThan), as an import does; a product no such state changed is returned as it is.
 */
export function productOverlay(
  overrides: ProductOverrideMap,
  fetchedAt: string,
): (product: RawProduct) => ShownProduct {
  const fresh = new Map(
    Object.entries(overrides).filter(([, override]) => isNewerThan(override, fetchedAt)),
  );
  return (product) => {
    const override = fresh.get(product.code);
    return override ? overriddenProduct(product, override) : { product };
  };
}

/** How many changed products a line names before "and N more". */
const NAMED = 5;

/** `is_orderable false`, `discount_multiplier 0.05`, `denominations 5.00-100.00`. */
function changeText(shown: ShownProduct, field: string): string {
  if (field === "denominations") return "denominations";
  return `${field} ${String(shown.product[field])}`;
}

/**
 * `2 products changed by product.update since the sync: GC-1 (is_orderable false, of T), ...`,
 * or undefined when none was. At most NAMED are named.
 */
export function overlayLine(changed: ShownProduct[]): string | undefined {
  const updated = changed.filter((shown) => shown.update !== undefined);
  if (updated.length === 0) return undefined;
  const named = updated.slice(0, NAMED).map((shown) => {
    const update = shown.update!;
    const what = update.changed.map((field) => changeText(shown, field)).join(", ");
    return `${shown.product.code} (${what}; of ${update.timestamp})`;
  });
  const more = updated.length > NAMED ? `, and ${updated.length - NAMED} more` : "";
  const products = updated.length === 1 ? "product" : "products";
  return `${updated.length} ${products} changed by product.update since the sync: ${named.join(", ")}${more}`;
}
