import type { CatalogIndex, CatalogIndexEntry } from "../../catalog/index-entry.js";
import { compareDecimal } from "../../money.js";
import type { OrderRow } from "../../orders/order-row.js";
import { isChoice } from "./choice-validation.js";
import { unknownCodeMessage } from "./code-hints.js";
import {
  checkDecimals,
  checkProduct,
  fail,
  PreflightMemo,
  type PreflightOptions,
  type PreflightResult,
  pass,
} from "./preflight.js";

/**
 * Preflight of every kind of row (docs/order-files.md, "Distribution and product choice"): a row
 * of one product as preflightRow checks it (remembered by PreflightMemo), then what its
 * distribution and currency cell ask of it; a choice of products (MULTIPLE, TEMPLATE) here.
 */
export class RowPreflight {
  private readonly memo: PreflightMemo;

  constructor(
    private readonly catalog: CatalogIndex | undefined,
    private readonly options: PreflightOptions = {},
  ) {
    this.memo = new PreflightMemo(catalog, options);
  }

  check(row: OrderRow): PreflightResult {
    if (isChoice(row)) return preflightChoice(row, this.catalog, this.options);
    const result = this.memo.check(row);
    if (!result.ok) return result;
    const entry = this.catalog?.entries[row.product_code];
    const recipient = entry && recipientProblem(row, [entry]);
    if (recipient) return fail(row, "distribution", recipient);
    if (row.currency !== undefined && row.currency !== result.currency) {
      const what = entry ? `product ${entry.code} is sold in` : "the payment currency is";
      return fail(row, "currency", `${what} ${result.currency}, not ${row.currency}`);
    }
    return result;
  }
}

/**
 * The service pays a recipient in payment products only (OpenAPI RecipientDistribution:
 * "Currently this method is only supported for distributing payment type products").
 */
function recipientProblem(row: OrderRow, entries: CatalogIndexEntry[]): string | undefined {
  if (row.distribution !== "recipient") return undefined;
  const other = entries.find((entry) => entry.payout_type !== "payment");
  if (!other) return undefined;
  return (
    `product ${other.code} is a ${other.payout_type} product: the service pays a recipient ` +
    "(distribution recipient) in payment products only"
  );
}

/** The smallest face value a product takes: its minimum, or the lowest of its list. */
function minimumOf(entry: CatalogIndexEntry): string | undefined {
  const denominations = entry.denominations;
  if (denominations === null) return undefined;
  if (denominations.type === "open") return denominations.min;
  return [...denominations.list].sort(compareDecimal)[0];
}

/**
 * The payment currency the row states (its currency cell, --currency), checked against what
 * its products are sold in when they are known.
 */
function statedCurrency(
  row: OrderRow,
  options: PreflightOptions,
): { currency?: string; problem?: PreflightResult } {
  const wanted = options.currency?.toUpperCase();
  const own = row.currency;
  if (own !== undefined && wanted !== undefined && own !== wanted)
    return { problem: fail(row, "currency", `currency ${own} is not ${wanted} (--currency)`) };
  return { currency: own ?? wanted };
}

/**
 * A choice of products: MULTIPLE codes must each be orderable, all of one currency, and the
 * face value (a whole number) not below any one's minimum (OpenAPI NewOrderItemDetails,
 * `face_value`; MultipleProduct, `values`). A template's products are not in the snapshot: its
 * currency is the row's, and only the face value's decimals can be checked. A choice is priced
 * at its face value: which product the recipient takes, and its discount, are not known yet.
 */
export function preflightChoice(
  row: OrderRow,
  catalog: CatalogIndex | undefined,
  options: PreflightOptions = {},
): PreflightResult {
  const stated = statedCurrency(row, options);
  if (stated.problem) return stated.problem;
  if (row.product_codes === undefined || catalog === undefined) {
    if (!stated.currency)
      return fail(row, "currency", "currency unknown without the catalog check: pass --currency");
    const decimals = checkDecimals(row.face_value, stated.currency);
    return decimals
      ? fail(row, "face_value", decimals)
      : pass(stated.currency, row.face_value, "0");
  }
  const entries: CatalogIndexEntry[] = [];
  for (const code of row.product_codes) {
    const entry = catalog.entries[code];
    if (entry === undefined) return fail(row, "product_codes", unknownCodeMessage(catalog, code));
    const product = checkProduct(entry);
    if (product) return fail(row, "product_codes", product);
    entries.push(entry);
  }
  const currency = entries[0]!.currency.toUpperCase();
  const other = entries.find((entry) => entry.currency.toUpperCase() !== currency);
  if (other) {
    const message =
      `product ${other.code} is sold in ${other.currency.toUpperCase()} and ` +
      `${entries[0]!.code} in ${currency}: a choice of products is of one currency`;
    return fail(row, "product_codes", message);
  }
  if (stated.currency !== undefined && stated.currency !== currency) {
    const message = `the products are sold in ${currency}, not ${stated.currency}`;
    return fail(row, row.currency !== undefined ? "currency" : "product_codes", message);
  }
  const recipient = recipientProblem(row, entries);
  if (recipient) return fail(row, "distribution", recipient);
  const decimals = checkDecimals(row.face_value, currency);
  if (decimals) return fail(row, "face_value", decimals);
  for (const entry of entries) {
    const minimum = minimumOf(entry);
    if (minimum !== undefined && compareDecimal(row.face_value, minimum) < 0) {
      const below = `face_value ${row.face_value} is below ${entry.code}'s minimum`;
      return fail(row, "face_value", `${below} ${minimum} ${currency}`);
    }
  }
  return pass(currency, row.face_value, "0");
}
