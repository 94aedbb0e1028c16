/**
 * What "orderable" means in giftjobs, one predicate for every view (docs/concepts.md,
 * "Orderable"): `catalog show --orderable` and its ORDERABLE column, the import's preflight and
 * the worker's product guard all ask this, so that a product one of them calls orderable is one
 * the others take.
 *
 * A product is orderable when the service says so (`is_orderable` true: OpenAPI
 * ProductIsOrderable, "we will reject any orders placed for products where this is false") and
 * its `state` is one the service takes orders in: LIVE or TEMPORARILY_DEGRADED (still sold,
 * perhaps slower; API-NOTES lists the three states). TEMPORARILY_DISABLED, and a state giftjobs
 * does not know, are not: an order would be refused or its outcome unknown.
 */

/** The states the service takes orders in. */
const ORDERABLE_STATES: readonly string[] = ["LIVE", "TEMPORARILY_DEGRADED"];

/** The fields the predicate reads: a raw product's, an index entry's, or an override's. */
export interface OrderableFields {
  code: string;
  is_orderable?: unknown;
  /** undefined when not known (a pushed state without a snapshot): is_orderable decides. */
  state?: unknown;
}

/** Why the product cannot be ordered now, or undefined when it can. */
export function notOrderableReason(product: OrderableFields): string | undefined {
  if (product.is_orderable !== true) return `product ${product.code} is not orderable`;
  if (product.state === undefined) return undefined;
  if (typeof product.state === "string" && ORDERABLE_STATES.includes(product.state))
    return undefined;
  const state = typeof product.state === "string" ? product.state : "of no known state";
  return `product ${product.code} is ${state}, not LIVE or TEMPORARILY_DEGRADED`;
}

/** Whether the product can be ordered now (notOrderableReason gives why not). */
export function isOrderable(product: OrderableFields): boolean {
  return notOrderableReason(product) === undefined;
}
