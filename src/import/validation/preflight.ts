import type { CatalogIndex, CatalogIndexEntry } from "../../catalog/index-entry.js";
import { notOrderableReason } from "../../catalog/orderable.js";
import {
  canonicalDecimal,
  compareDecimal,
  currencyDecimals,
  decimalPlaces,
  discountedPriceUnits,
  fromUnits,
  toUnits,
} from "../../money.js";
import type { OrderRow } from "../../orders/order-row.js";
import { unknownCodeMessage } from "./code-hints.js";
import type { RowError } from "./row-error.js";

export interface PreflightOptions {
  /**
   * The payment currency (`--currency`). With a catalog it must be the product's currency
   * (ACCOUNT_BALANCE pays in the product's currency); without one (`--no-catalog-check`) it is
   * the only way to know the currency, and rows are refused when it is missing.
   */
  currency?: string;
}

export interface PreflightPass {
  ok: true;
  /** The payment currency of the row: its product's. */
  currency: string;
  /** face_value - discount, at the currency's scale (integer minor units). */
  priceUnits: bigint;
  /** The same price as a decimal string ("24.67"). */
  price: string;
  /** The face value in minor units, for totals. */
  faceUnits: bigint;
}

export type PreflightResult = PreflightPass | { ok: false; errors: RowError[] };

/** ` (product.update of T)` for an entry a pushed state changed, nothing otherwise. */
function pushed(entry: CatalogIndexEntry): string {
  return entry.pushed_at === undefined ? "" : ` (product.update of ${entry.pushed_at})`;
}

/**
 * Whether the row's product can be ordered: the one predicate `catalog show --orderable` and the
 * worker's product guard use too (src/catalog/orderable.ts; docs/concepts.md, "Orderable"), then
 * whether giftjobs can read its denominations.
 */
export function checkProduct(entry: CatalogIndexEntry): string | undefined {
  const reason = notOrderableReason(entry);
  if (reason && !entry.is_orderable) return `${reason}${pushed(entry)}`;
  if (reason) {
    // A product.update carries no state: the snapshot's stands until the next sync.
    const note =
      entry.pushed_at === undefined
        ? ""
        : ` in the catalog snapshot (a product.update of ${entry.pushed_at} says it is ` +
          "orderable: `giftjobs catalog sync` reads its state)";
    return `${reason}${note}`;
  }
  if (entry.denominations === null) {
    return (
      `product ${entry.code} has no denominations giftjobs can read ` +
      `(payout type ${entry.payout_type})${pushed(entry)}`
    );
  }
  return undefined;
}

function checkDenomination(entry: CatalogIndexEntry, faceValue: string): string | undefined {
  const denominations = entry.denominations;
  if (denominations === null) return undefined;
  if (denominations.type === "open") {
    const { min, max } = denominations;
    if (compareDecimal(faceValue, min) < 0 || compareDecimal(faceValue, max) > 0) {
      const range = `${min}..${max} ${entry.currency}`;
      return `face_value ${faceValue} is outside ${entry.code}'s range ${range}${pushed(entry)}`;
    }
    return undefined;
  }
  if (denominations.list.some((value) => compareDecimal(faceValue, value) === 0)) return undefined;
  const list = `${denominations.list.join(", ")} ${entry.currency}${pushed(entry)}`;
  return `face_value ${faceValue} is not one of ${entry.code}'s denominations: ${list}`;
}

export function checkDecimals(faceValue: string, currency: string): string | undefined {
  const allowed = currencyDecimals(currency);
  // Trailing zeros carry no value: "10.00" is a fine JPY amount, "10.5" is not.
  if (decimalPlaces(canonicalDecimal(faceValue)) <= allowed) return undefined;
  return `face_value ${faceValue} has more decimals than ${currency} allows (${allowed})`;
}

export function pass(
  currency: string,
  faceValue: string,
  discountMultiplier: string,
): PreflightPass {
  const scale = currencyDecimals(currency);
  const priceUnits = discountedPriceUnits(faceValue, discountMultiplier, currency);
  return {
    ok: true,
    currency,
    priceUnits,
    price: fromUnits(priceUnits, scale),
    faceUnits: toUnits(faceValue, scale),
  };
}

/** What the catalog says of a row of one product: every problem, and its currency when known. */
export interface ProductRowCheck {
  errors: RowError[];
  /** The payment currency: the product's, or --currency without a catalog. */
  currency?: string;
  discountMultiplier: string;
}

/**
 * Every problem the catalog finds with a row of one product: its product (unknown, not LIVE, of
 * another currency than --currency) and its face value (decimals, denominations). A face value
 * of "" is one validation already refused: it is not checked again (docs/order-files.md,
 * "Every problem of a row").
 */
export function productRowCheck(
  row: OrderRow,
  catalog: CatalogIndex | undefined,
  options: PreflightOptions = {},
): ProductRowCheck {
  const errors: RowError[] = [];
  const note = (column: string, message: string | undefined) => {
    if (message !== undefined) errors.push({ line: row.line, column, message });
  };
  const face = row.face_value;
  const wanted = options.currency?.toUpperCase();
  if (catalog === undefined) {
    if (!wanted) {
      note("face_value", "currency unknown without the catalog check: pass --currency");
      return { errors, discountMultiplier: "0" };
    }
    if (face !== "") note("face_value", checkDecimals(face, wanted));
    return { errors, currency: wanted, discountMultiplier: "0" };
  }
  const entry = catalog.entries[row.product_code];
  if (entry === undefined) {
    note("product_code", unknownCodeMessage(catalog, row.product_code));
    return { errors, discountMultiplier: "0" };
  }
  note("product_code", checkProduct(entry));
  const currency = entry.currency.toUpperCase();
  if (wanted && wanted !== currency)
    note(
      "product_code",
      `product ${entry.code} is sold in ${currency}, not ${wanted} (--currency)`,
    );
  if (face !== "")
    note("face_value", checkDecimals(face, currency) ?? checkDenomination(entry, face));
  return { errors, currency, discountMultiplier: entry.discount_multiplier };
}

/**
 * Checks a valid row against the catalog snapshot's index, as the service would, so that a
 * campaign learns of a bad row before anything is paid. Pure: the caller loads the index once.
 * Without an index (`--no-catalog-check`) only the decimals are checked, against
 * `options.currency`, and the price is the face value (the discount is unknown).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function preflightRow(
  row: OrderRow,
  catalog: CatalogIndex | undefined,
  options: PreflightOptions = {},
): PreflightResult {
  const checked = productRowCheck(row, catalog, options);
  if (checked.errors.length > 0) return { ok: false, errors: checked.errors };
  return pass(checked.currency!, row.face_value, checked.discountMultiplier);
}

/**
 * preflightRow with its passes remembered by product code and face value: a campaign sends few
 * distinct cards to many people, and pricing in BigInt is the costliest check of a row. A
 * failure is not kept (it names the row's line). Past `limit` distinct pairs, new pairs are
 * checked each time, so memory stays bounded whatever the file.
 */
export class PreflightMemo {
  private readonly passes = new Map<string, PreflightPass>();

  constructor(
    private readonly catalog: CatalogIndex | undefined,
    private readonly options: PreflightOptions = {},
    private readonly limit = 10_000,
  ) {}

  check(row: OrderRow): PreflightResult {
    const key = `${row.product_code}\n${row.face_value}`;
    const known = this.passes.get(key);
    if (known) return known;
    const result = preflightRow(row, this.catalog, this.options);
    if (result.ok && this.passes.size < this.limit) this.passes.set(key, result);
    return result;
  }
}
