import { rename, rm } from "node:fs/promises";
import { stringify } from "csv-stringify/sync";
import type { CatalogIndex, CatalogIndexEntry } from "../catalog/index-entry.js";
import { notOrderableReason } from "../catalog/orderable.js";
import { UserError } from "../errors/user-error.js";

/**
 * The columns of `orders template`, in order.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const TEMPLATE_COLUMNS = [
  "email",
  "product_code",
  "face_value",
  "reference",
  "description",
] as const;

/** The product code of the example row when there is no catalog snapshot. */
const PLACEHOLDER_CODE = "PRODUCT-CODE";

export interface TemplateOptions {
  /** Only products redeemable in this country (ISO code, any case). */
  country?: string;
  /**
   * The products sheet lists only the products an import accepts now (LIVE or
   * TEMPORARILY_DEGRADED: src/catalog/orderable.ts); without it, every
   * product the snapshot marks orderable, with its state. @defaultValue false
   */
  orderable?: boolean;
}

/** Orderable in the snapshot: the flag set and denominations an order can be checked against. */
function isOrderable(entry: CatalogIndexEntry): boolean {
  return entry.is_orderable && entry.denominations !== null;
}

function inCountry(entry: CatalogIndexEntry, country: string | undefined): boolean {
  return country === undefined || entry.countries.includes(country.toUpperCase());
}

/** The products the template's products sheet lists, by code. */
function templateProducts(index: CatalogIndex, options: TemplateOptions = {}): CatalogIndexEntry[] {
  return (
    Object.values(index.entries)
      .filter((e) => isOrderable(e) && inCountry(e, options.country))
      // What an import takes now: the one predicate (docs/concepts.md, "Orderable").
      .filter((e) => !options.orderable || notOrderableReason(e) === undefined)
      .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
  );
}

function denominationText(entry: CatalogIndexEntry): string {
  const d = entry.denominations;
  if (!d) return "";
  return d.type === "open" ? `${d.min}-${d.max}` : d.list.join(", ");
}

/**
 * The example row: a LIVE gift card of the snapshot (of `country`), with a face value it
 * accepts, so the template imports as it is; without a snapshot, a placeholder product code.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function templateExample(
  index: CatalogIndex | undefined,
  options: TemplateOptions = {},
): string[] {
  const row = (code: string, face: string) => [
    "recipient@example.com",
    code,
    face,
    "example-0001",
    "Thank you!",
  ];
  if (!index) return row(PLACEHOLDER_CODE, "25.00");
  const live = templateProducts(index, { ...options, orderable: true });
  const product = live.find((e) => e.payout_type === "gift_card") ?? live[0];
  if (!product) {
    const where = options.country ? ` redeemable in ${options.country.toUpperCase()}` : "";
    throw new UserError(`the catalog snapshot has no orderable LIVE product${where}`);
  }
  const d = product.denominations!;
  return row(product.code, d.type === "fixed" ? d.list[0]! : d.min);
}

/** The template as CSV text: the header and the example row. */
export function templateCsv(index: CatalogIndex | undefined, options: TemplateOptions = {}) {
  return stringify([[...TEMPLATE_COLUMNS], templateExample(index, options)]);
}

const TEXT = { numFmt: "@" };

/**
 * The template as an .xlsx workbook: an "Orders" sheet (header, example row; every cell
 * formatted as text, so a face value typed in it stays as typed) and, with a snapshot, a
 * "Products" sheet of code, name, currency, denominations and state. Streamed: a catalog of
 * many products is never held whole. Written beside `path`, then renamed into place.
 */
export async function writeTemplateXlsx(
  path: string,
  index: CatalogIndex | undefined,
  options: TemplateOptions = {},
): Promise<void> {
  // Loaded here: exceljs only for a workbook (docs/architecture/command-line.md, "Start-up").
  const { default: ExcelJS } = await import("exceljs");
  const example = templateExample(index, options);
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: temporary,
      useStyles: true,
      useSharedStrings: false,
    });
    const orders = workbook.addWorksheet("Orders");
    orders.columns = TEMPLATE_COLUMNS.map((key) => ({
      key,
      width: key === "email" ? 32 : 20,
      style: TEXT,
    }));
    orders.addRow([...TEMPLATE_COLUMNS]).commit();
    orders.addRow(example).commit();
    orders.commit();
    if (index) {
      const products = workbook.addWorksheet("Products");
      products.columns = [
        { key: "code", width: 24 },
        { key: "name", width: 40 },
        { key: "currency", width: 10 },
        { key: "denominations", width: 30 },
        { key: "state", width: 12 },
      ];
      products.addRow(["code", "name", "currency", "denominations", "state"]).commit();
      for (const e of templateProducts(index, options)) {
        products.addRow([e.code, e.name, e.currency, denominationText(e), e.state]).commit();
      }
      products.commit();
    }
    await workbook.commit();
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
