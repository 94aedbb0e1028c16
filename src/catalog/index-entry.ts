/**
 * One orderable code in the snapshot's compact index: the fields order validation needs.
 * A subscription product contributes one entry per plan (`subscription_plan_code`), since a
 * subscription is ordered by its plan code; `plan_of` then names the product.
 */
export interface CatalogIndexEntry {
  code: string;
  name: string;
  payout_type: string;
  is_orderable: boolean;
  /** LIVE | TEMPORARILY_DISABLED | TEMPORARILY_DEGRADED | ... */
  state: string;
  /**
   * stocked | realtime (how the service fulfils it), as received; null when absent or not a
   * string. Not used by validation: it is here so that a plain product's entry holds every field
   * the diff compares (see serialiseProduct). Absent in snapshots written before it was added.
   */
  availability?: string | null;
  currency: string;
  countries: string[];
  /**
   * open: min..max inclusive; fixed: one of `list`. null when the product has none we can read
   * (unknown payout types): such codes are refused by preflight.
   */
  denominations:
    | { type: "open"; min: string; max: string }
    | { type: "fixed"; list: string[] }
    | null;
  /** Decimal string, e.g. "0.0130"; "0" when absent. */
  discount_multiplier: string;
  /**
   * Set only in memory, on an entry a `product.update` newer than the snapshot changed (see
   * product-overrides.ts): that message's timestamp.
   */
  pushed_at?: string;
  /** For a subscription plan entry: the product's own code. */
  plan_of?: string;
  /**
   * What is wrong with the product's relied-on fields (productProblems); set only when something
   * is, and then `denominations` is null so that preflight refuses the code with this reason.
   */
  problems?: string[];
}

/** The index file: `index.json` beside `products.json` in each snapshot. */
export interface CatalogIndex {
  fetched_at: string;
  entries: Record<string, CatalogIndexEntry>;
}

/** An index entry with its JSON text, serialised once for index.json and the records line. */
export interface IndexedEntry {
  entry: CatalogIndexEntry;
  text: string;
}
