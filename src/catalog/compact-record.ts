import type { RawProduct } from "../api/schemas.js";
import { indexEntriesOf } from "./index-entries.js";
import type { IndexedEntry } from "./index-entry.js";
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
export type RecordDenominations =
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

/**
 * What a snapshot writes of a product besides its text: its index entries, each with its JSON
 * text (see indexEntriesOf for `problems`), and its records.ndjson line (recordLineOf).
 */
export function serialiseProduct(
  product: RawProduct,
  problems: string[],
): { indexed: IndexedEntry[]; line: string } {
  const indexed = indexEntriesOf(product, problems).map((entry) => ({
    entry,
    text: JSON.stringify(entry),
  }));
  return { indexed, line: recordLineOf(product, indexed) };
}

/**
 * The records.ndjson line of a product, given its index entries with their texts. For a
 * product without problems that is not a subscription, the one index entry already holds every
 * diffed field but availability, with the values a compact record would hold (its checks make
 * them so, given a discount_multiplier), and its countries sorted: the line is that text with
 * availability and countries_redeemable_in added, which saves serialising the product a second
 * time (about a tenth of a 100k sync). Other products get JSON.stringify(compactRecordOf).
 * Either line parses to an object with every DIFF_FIELDS key.
 */
function recordLineOf(product: RawProduct, indexed: readonly IndexedEntry[]): string {
  const only = indexed.length === 1 ? indexed[0] : undefined;
  if (
    only !== undefined &&
    only.entry.code === product.code &&
    only.entry.problems === undefined &&
    only.entry.plan_of === undefined &&
    product.payout_type !== "subscription" &&
    typeof product.discount_multiplier === "string"
  ) {
    const availability = JSON.stringify(product.availability ?? null);
    const countries = JSON.stringify(only.entry.countries);
    return `${only.text.slice(0, -1)},"availability":${availability},"countries_redeemable_in":${countries}}`;
  }
  return JSON.stringify(compactRecordOf(product));
}
