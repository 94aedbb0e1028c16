import type { RawProduct } from "../api/schemas.js";
import { indexEntriesOf } from "./index-entries.js";
import type { CatalogIndexEntry, IndexedEntry } from "./index-entry.js";
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
type RecordDenominations =
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

/** What a snapshot writes of a product besides its text (serialiseProduct). */
export interface SerialisedProduct {
  /** Its index entries, each with its JSON text (see indexEntriesOf for `problems`). */
  indexed: IndexedEntry[];
  /**
   * The text the diff compares and hashes, which parses (recordOfText) to the product's compact
   * record: a plain product's one index entry text, else the compact record's JSON.
   */
  record: string;
  /**
   * Whether `record` goes to records.ndjson. A plain product's record is its line in index.json
   * already, where the next sync reads it back from.
   */
  ownLine: boolean;
}

/**
 * Serialises a product once for the index and the diff. A plain product (no problems, not a
 * subscription, with a discount_multiplier, availability a string or absent) has one index
 * entry holding every diffed field with the values its compact record would hold (its checks
 * make them so; index countries are sorted like the record's): that entry's text is its record,
 * which saves serialising it a second time and writing it a second time (about a sixth of a
 * 100k sync). Other products get JSON.stringify(compactRecordOf) in records.ndjson.
 */
export function serialiseProduct(product: RawProduct, problems: string[]): SerialisedProduct {
  const indexed = indexEntriesOf(product, problems).map((entry) => ({
    entry,
    text: JSON.stringify(entry),
  }));
  const only = indexed.length === 1 ? indexed[0] : undefined;
  if (only !== undefined && isPlain(product, only.entry)) {
    return { indexed, record: only.text, ownLine: false };
  }
  return { indexed, record: JSON.stringify(compactRecordOf(product)), ownLine: true };
}

function isPlain(product: RawProduct, entry: CatalogIndexEntry): boolean {
  const availability = product.availability;
  return (
    entry.code === product.code &&
    entry.problems === undefined &&
    entry.plan_of === undefined &&
    product.payout_type !== "subscription" &&
    typeof product.discount_multiplier === "string" &&
    (availability === undefined || availability === null || typeof availability === "string")
  );
}

/**
 * The compact record a record text holds: a records.ndjson line (a compact record, or in
 * snapshots of the previous version an index entry with availability and
 * countries_redeemable_in appended), or a plain product's index entry, whose `countries` are
 * the record's countries_redeemable_in.
 */
export function recordOfText(text: string): CompactRecord {
  const parsed = JSON.parse(text) as CompactRecord | CatalogIndexEntry;
  return "countries_redeemable_in" in parsed ? parsed : recordOfEntry(parsed as CatalogIndexEntry);
}

/** The compact record of a plain product, from its index entry. */
export function recordOfEntry(entry: CatalogIndexEntry): CompactRecord {
  return {
    code: entry.code,
    name: entry.name,
    payout_type: entry.payout_type,
    is_orderable: entry.is_orderable,
    state: entry.state,
    availability: entry.availability ?? null,
    currency: entry.currency,
    discount_multiplier: entry.discount_multiplier,
    denominations: entry.denominations,
    countries_redeemable_in: entry.countries,
  };
}
