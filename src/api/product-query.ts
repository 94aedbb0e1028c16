import { RefusedRequestError } from "./errors/index.js";

/** Filters and paging of GET /v2/product (interface document plus API-NOTES.md). */
export interface ProductQuery {
  /** true: only orderable products; false: all. */
  is_orderable?: boolean;
  /** Filter by product code (older versions; the interface document lists it). */
  code?: string;
  /** A product matches if redeemable in any of these ISO 3166 alpha-2 codes. */
  countries_redeemable_in?: string[];
  categories?: string[];
  after?: string;
  before?: string;
  /** 1..500. @defaultValue the service's, 500 */
  limit?: number;
}

/** Checks the query and builds its search string; refuses what the service would refuse. */
export function productSearchParams(query: ProductQuery): URLSearchParams {
  if (query.after !== undefined && query.before !== undefined) {
    throw new RefusedRequestError("after and before cursors must not be used together");
  }
  if (
    query.limit !== undefined &&
    !(Number.isInteger(query.limit) && query.limit >= 1 && query.limit <= 500)
  ) {
    throw new RefusedRequestError(`limit must be a whole number from 1 to 500, got ${query.limit}`);
  }
  const params = new URLSearchParams();
  if (query.is_orderable !== undefined) params.set("is_orderable", String(query.is_orderable));
  if (query.code !== undefined) params.set("code", query.code);
  for (const country of query.countries_redeemable_in ?? [])
    params.append("countries_redeemable_in", country);
  for (const category of query.categories ?? []) params.append("categories", category);
  if (query.after !== undefined) params.set("after", query.after);
  if (query.before !== undefined) params.set("before", query.before);
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  return params;
}
