import type { CatalogIndex, CatalogIndexEntry } from "../../catalog/index-entry.js";
import { compareDecimal } from "../../money.js";
import type { OrderRow } from "../../orders/order-row.js";
import type { RenamedColumn } from "../header/header.js";
import { isChoice } from "./choice-validation.js";
import { unknownCodeMessage } from "./code-hints.js";
import {
  checkDecimals,
  checkProduct,
  PreflightMemo,
  type PreflightOptions,
  type PreflightResult,
  pass,
  productRowCheck,
} from "./preflight.js";
import type { RowError } from "./row-error.js";

/**
 * Preflight of every kind of row (docs/order-files.md, "Distribution and product choice"): a row
 * of one product as preflightRow checks it (remembered by PreflightMemo), then what its
 * distribution and currency cell ask of it; a choice of products (MULTIPLE, TEMPLATE) here.
 * Every problem of the row is listed, not the first (docs/order-files.md, "Every problem of a
 * row").
 */
export class RowPreflight {
  private readonly memo: PreflightMemo;
  /** The face value's header when it names a currency (`Amount (USD)`). */
  private header: { name: string; currency: string } | undefined;

  constructor(
    private readonly catalog: CatalogIndex | undefined,
    private readonly options: PreflightOptions = {},
  ) {
    this.memo = new PreflightMemo(catalog, options);
  }

  check(row: OrderRow): PreflightResult {
    if (isChoice(row)) return preflightChoice(row, this.catalog, this.options);
    const result = this.memo.check(row);
    // A failure is worked out again in full: the memo keeps passes only.
    if (!result.ok) return { ok: false, errors: this.problems(row) };
    const others = this.cellProblems(row, result.currency);
    return others.length > 0 ? { ok: false, errors: others } : result;
  }

  /**
   * Told the header's renamed columns: a face value header naming a currency (`Value EUR`)
   * refuses each row whose product is of another (docs/order-files.md, "The currency in a
   * header").
   */
  onHeader(renamed: readonly RenamedColumn[]): void {
    const face = renamed.find((column) => column.field === "face_value" && column.currency);
    this.header = face && { name: face.source, currency: face.currency! };
  }

  /**
   * Every problem the catalog finds with a row, for a row validation has refused too: its
   * face_value is "" when validation refused it, and is then not checked again.
   */
  problems(row: OrderRow): RowError[] {
    if (isChoice(row)) {
      const result = preflightChoice(row, this.catalog, this.options);
      return result.ok ? [] : result.errors;
    }
    const checked = productRowCheck(row, this.catalog, this.options);
    return [...checked.errors, ...this.cellProblems(row, checked.currency)];
  }

  /** What the row's distribution and currency cell ask of its product. */
  private cellProblems(row: OrderRow, currency: string | undefined): RowError[] {
    const errors: RowError[] = [];
    const entry = this.catalog?.entries[row.product_code];
    const recipient = entry && recipientProblem(row, [entry]);
    if (recipient) errors.push({ line: row.line, column: "distribution", message: recipient });
    if (row.currency !== undefined && currency !== undefined && row.currency !== currency) {
      const what = entry ? `product ${entry.code} is sold in` : "the payment currency is";
      errors.push({
        line: row.line,
        column: "currency",
        message: `${what} ${currency}, not ${row.currency}`,
      });
    }
    const header = this.header;
    if (entry && header && currency !== undefined && currency !== header.currency) {
      const message = `the header ${JSON.stringify(header.name)} says ${header.currency}, but product ${entry.code} is in ${currency}`;
      errors.push({ line: row.line, column: "face_value", message });
    }
    return errors;
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
): { currency?: string; problem?: string } {
  const wanted = options.currency?.toUpperCase();
  const own = row.currency;
  if (own !== undefined && wanted !== undefined && own !== wanted)
    return { currency: own, problem: `currency ${own} is not ${wanted} (--currency)` };
  return { currency: own ?? wanted };
}

/**
 * A choice of products: MULTIPLE codes must each be orderable, all of one currency, and the
 * face value (a whole number) not below any one's minimum (OpenAPI NewOrderItemDetails,
 * `face_value`; MultipleProduct, `values`). A template's products are not in the snapshot: its
 * currency is the row's, and only the face value's decimals can be checked. A choice is priced
 * at its face value: which product the recipient takes, and its discount, are not known yet.
 */
function preflightChoice(
  row: OrderRow,
  catalog: CatalogIndex | undefined,
  options: PreflightOptions = {},
): PreflightResult {
  const errors: RowError[] = [];
  const note = (column: string, message: string | undefined) => {
    if (message !== undefined) errors.push({ line: row.line, column, message });
  };
  const stated = statedCurrency(row, options);
  if (stated.problem) note("currency", stated.problem);
  const face = row.face_value;
  if (row.product_codes === undefined || catalog === undefined) {
    if (!stated.currency)
      note("currency", "currency unknown without the catalog check: pass --currency");
    else if (face !== "") note("face_value", checkDecimals(face, stated.currency));
    if (errors.length > 0 || !stated.currency) return { ok: false, errors };
    return pass(stated.currency, face, "0");
  }
  const entries: CatalogIndexEntry[] = [];
  for (const code of row.product_codes) {
    const entry = catalog.entries[code];
    if (entry === undefined) note("product_codes", unknownCodeMessage(catalog, code));
    else {
      note("product_codes", checkProduct(entry));
      entries.push(entry);
    }
  }
  const currency = entries[0]?.currency.toUpperCase();
  if (currency !== undefined) {
    for (const problem of choiceCurrencyProblems(row, entries, stated.currency)) note(...problem);
    note("distribution", recipientProblem(row, entries));
    if (face !== "") note("face_value", choiceFaceProblem(face, currency, entries));
  }
  if (errors.length > 0 || currency === undefined) return { ok: false, errors };
  return pass(currency, face, "0");
}

/** A choice's products of one currency, and the one the row states. */
function choiceCurrencyProblems(
  row: OrderRow,
  entries: CatalogIndexEntry[],
  stated: string | undefined,
): [string, string][] {
  const currency = entries[0]!.currency.toUpperCase();
  const other = entries.find((entry) => entry.currency.toUpperCase() !== currency);
  if (other) {
    const message =
      `product ${other.code} is sold in ${other.currency.toUpperCase()} and ` +
      `${entries[0]!.code} in ${currency}: a choice of products is of one currency`;
    return [["product_codes", message]];
  }
  if (stated !== undefined && stated !== currency) {
    const message = `the products are sold in ${currency}, not ${stated}`;
    return [[row.currency !== undefined ? "currency" : "product_codes", message]];
  }
  return [];
}

/** A choice's face value: its decimals, and not below any one product's minimum. */
function choiceFaceProblem(
  face: string,
  currency: string,
  entries: CatalogIndexEntry[],
): string | undefined {
  const decimals = checkDecimals(face, currency);
  if (decimals) return decimals;
  for (const entry of entries) {
    const minimum = minimumOf(entry);
    if (minimum !== undefined && compareDecimal(face, minimum) < 0)
      return `face_value ${face} is below ${entry.code}'s minimum ${minimum} ${currency}`;
  }
  return undefined;
}
