import type { ProductQuery } from "../api/product-query.js";

/** Which part of the catalog a sync mirrors (the filters of GET /v2/product). */
export interface CatalogFilters {
  /** Only products that can be ordered now. @defaultValue false (all products) */
  orderableOnly?: boolean;
  /** ISO 3166 alpha-2 codes; a product matches if redeemable in any. @defaultValue all countries */
  countries?: string[];
  /** Category names; a product matches if in any. @defaultValue all categories */
  categories?: string[];
}

/** The filters as recorded in a manifest: every key present, so two runs compare equal. */
export interface NormalizedFilters {
  orderable_only: boolean;
  countries: string[];
  categories: string[];
}

export function normalizeFilters(filters: CatalogFilters = {}): NormalizedFilters {
  return {
    orderable_only: filters.orderableOnly ?? false,
    countries: [...new Set(filters.countries ?? [])].sort(),
    categories: [...new Set(filters.categories ?? [])].sort(),
  };
}

/** The query of GET /v2/product for these filters (without cursor). */
export function filtersToQuery(filters: NormalizedFilters, limit: number): ProductQuery {
  const query: ProductQuery = { limit };
  // The service reads is_orderable=false as "all products", so only send it when narrowing.
  if (filters.orderable_only) query.is_orderable = true;
  if (filters.countries.length > 0) query.countries_redeemable_in = filters.countries;
  if (filters.categories.length > 0) query.categories = filters.categories;
  return query;
}

export function sameFilters(a: NormalizedFilters, b: NormalizedFilters): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What differs from `before` to `after`, as "countries: - -> US; orderable_only: false -> true". */
export function filterChange(before: NormalizedFilters, after: NormalizedFilters): string {
  const show = (value: boolean | string[]) =>
    Array.isArray(value) ? value.join(",") || "-" : String(value);
  const keys = ["orderable_only", "countries", "categories"] as const;
  return keys
    .filter((key) => show(before[key]) !== show(after[key]))
    .map((key) => `${key}: ${show(before[key])} -> ${show(after[key])}`)
    .join("; ");
}
