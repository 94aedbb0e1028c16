import type { CatalogIndex, CatalogIndexEntry } from "../../src/catalog/index-entry.js";

/** A snapshot index entry: a LIVE, orderable USD gift card, open 5..500, unless overridden. */
export function indexEntry(
  code: string,
  overrides: Partial<CatalogIndexEntry> = {},
): CatalogIndexEntry {
  return {
    code,
    name: code,
    payout_type: "gift_card",
    is_orderable: true,
    state: "LIVE",
    currency: "USD",
    countries: ["US"],
    denominations: { type: "open", min: "5", max: "500.00" },
    discount_multiplier: "0.0130",
    ...overrides,
  };
}

/** A snapshot index of these entries, keyed by code. */
export function catalogIndexOf(...entries: CatalogIndexEntry[]): CatalogIndex {
  return {
    fetched_at: "2026-01-01T00:00:00Z",
    entries: Object.fromEntries(entries.map((e) => [e.code, e])),
  };
}
