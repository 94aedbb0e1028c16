import ExcelJS from "exceljs";
import type { CatalogIndex, CatalogIndexEntry } from "../../src/catalog/index-entry.js";
import { currencyDecimals, fromUnits, toUnits } from "../../src/money.js";
import { largeRows } from "./csv.js";

/** Writes a workbook of `sheets` (name -> rows of cell values) with exceljs; returns the path. */
export async function xlsxFile(
  path: string,
  sheets: Record<string, ExcelJS.CellValue[][]>,
): Promise<string> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = workbook.addWorksheet(name);
    for (const row of rows) sheet.addRow(row);
  }
  await workbook.xlsx.writeFile(path);
  return path;
}

/** A sheet's rows as text, read back with exceljs (for files the code wrote). */
export async function sheetRows(path: string, name: string): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  const sheet = workbook.getWorksheet(name);
  if (!sheet) throw new Error(`no sheet ${name} in ${path}`);
  const rows: string[][] = [];
  sheet.eachRow((row) => {
    const values = row.values as ExcelJS.CellValue[];
    rows.push(values.slice(1).map((v) => (v === null || v === undefined ? "" : String(v))));
  });
  return rows;
}

/**
 * An open-denomination product of a two-decimal currency, and a face value in its range with
 * one significant decimal ("25.1"), for numbers that floats cannot hold exactly.
 */
export function openProduct(index: CatalogIndex): { product: CatalogIndexEntry; value: string } {
  const product = Object.values(index.entries)
    .filter((e) => e.is_orderable && e.state === "LIVE" && e.payout_type === "gift_card")
    .filter((e) => e.denominations?.type === "open" && currencyDecimals(e.currency) === 2)
    .sort((a, b) => (a.code < b.code ? -1 : 1))[0];
  if (product?.denominations?.type !== "open")
    throw new Error("the test catalog has no open two-decimal product");
  const units = toUnits(product.denominations.min, 2) + 10n;
  if (units > toUnits(product.denominations.max, 2)) throw new Error("range too narrow");
  return { product, value: fromUnits(units, 2).replace(/0$/, "") };
}

/**
 * Streams the rows of writeLargeCsv (the same rows) to an .xlsx at `path` with exceljs's
 * streaming WorkbookWriter, as Excel saves a sheet: text in the shared strings table, face
 * values stored as numbers. The workbook is never whole in memory (the shared strings are).
 */
export async function writeLargeXlsx(
  index: CatalogIndex,
  path: string,
  rows: number,
  options: { products?: number; referencePrefix?: string } = {},
): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: true,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet("Orders");
  sheet.addRow(["email", "product_code", "face_value", "reference"]).commit();
  for (const r of largeRows(index, rows, options))
    sheet.addRow([r.email, r.code, Number(r.face), r.reference]).commit();
  sheet.commit();
  await workbook.commit();
}
