import { grouped } from "../../grouped.js";
import { resolveHeader } from "../header/header.js";
import { type FoundHeader, HeaderRowError, HeaderSearch } from "../header/header-row.js";
import { shownName } from "../header/name-list.js";
import { totalsLabel } from "../header/totals-row.js";
import type { RowError } from "../validation/row-error.js";
import { MAX_RECORD_CHARS } from "./csv-records.js";
import { type CsvItem, isBlank, type ReadOrderRowsOptions, toRow } from "./csv-rows.js";
import { isFixListHeader, readFixListCells } from "./fix-list-cell.js";
import { OrderFileError } from "./order-file-error.js";
import { columnLetters, type SheetRow, trimTrailingEmpty } from "./xlsx-cells.js";

/** What reading a workbook's sheet takes, .xlsx or .ods. */
export interface ReadSheetOptions extends Omit<ReadOrderRowsOptions, "delimiter" | "threadFrom"> {
  /** The sheet to read, by name, hidden or not. @defaultValue the workbook's first visible sheet */
  sheet?: string;
  /**
   * The most the workbook's entries may unpack to, together; given, an entry's ratio to its
   * packed size is no longer checked (see zip-limits.ts). @defaultValue UNZIPPED_LIMITS
   */
  maxUnzippedBytes?: number;
}

/** What reading one worksheet needs besides its rows. */
export interface SheetContext {
  name: string;
  label: string;
  options: ReadSheetOptions;
  /** The workbook's hidden sheets skipped (none when the sheet was named). */
  hidden: string[];
  /** How many sheets the workbook holds: the sheet is named in messages when it has others. */
  count: number;
  /** Told after each row is read: for options.onPosition. */
  onRow?: () => void;
}

/** A row beyond the CSV reader's record limit is refused the same way, in one line. */
function checkRowSize(row: SheetRow, label: string): void {
  if (row.chars <= MAX_RECORD_CHARS) return;
  throw new OrderFileError(label, [
    {
      line: row.number,
      column: "",
      message: `a row longer than ${grouped(MAX_RECORD_CHARS)} characters`,
    },
  ]);
}

/**
 * The row's problems in the columns that are read, each naming its cell; those cells are
 * blanked in `values` (validation does not speak of them again).
 */
function cellProblems(row: SheetRow, header: readonly string[], values: string[]): RowError[] {
  const errors: RowError[] = [];
  header.forEach((field, i) => {
    const problem = row.problems?.[i];
    if (field === "" || problem === undefined) return;
    const message = `cell ${columnLetters(i + 1)}${row.number} ${problem}`;
    errors.push({ line: row.number, column: field, message });
    values[i] = "";
  });
  return errors;
}

/**
 * What reading a sheet's rows needs once its header is found: how a row is made an item
 * (undefined: a blank or totals row, left out). A formula, a date or an error value in a column
 * that maps to a field makes the row invalid, naming the cell; in an ignored column it is kept
 * as text (it is never sent).
 */
function headerFound(
  found: FoundHeader<SheetRow>,
  context: SheetContext,
): (row: SheetRow) => CsvItem | undefined {
  const { options } = context;
  const { line, names } = found.header;
  // An error file saved as a workbook: its cells were escaped as it was written (fix-list-cell.ts).
  const fixList = isFixListHeader(found.header.row.cells);
  const resolved = resolveHeader(names, {
    map: options.map,
    line,
    strictColumns: options.strictColumns,
    emailOptional: options.emailOptional,
  });
  if (!resolved.ok) throw new OrderFileError(sheetLabel(context), resolved.errors);
  const header = resolved.fields;
  const { ignored, renamed } = resolved;
  const sheet = { name: context.name, hidden: context.hidden, count: context.count };
  options.onHeader?.({
    line,
    names,
    renamed,
    ignored,
    skipped: found.skipped,
    by: found.by,
    sheet,
  });
  return (row) => {
    const at = row.number;
    const cells = fixList ? readFixListCells(row.cells) : row.cells;
    if (isBlank(cells)) return undefined;
    const beyond = cells.findIndex((cell, i) => i >= header.length && cell.trim() !== "");
    // Cells right of the header are blank (or the row is refused): it is the header's width.
    const width = cells.slice(0, header.length);
    for (let i = 0; i < header.length; i++) width[i] ??= "";
    const values = row.problems === undefined ? width : width.slice();
    const problems = row.problems === undefined ? [] : cellProblems(row, header, values);
    const item = toRow(at, header, ignored, values);
    const unread = new Set(problems.map((p) => p.column));
    const totals = totalsLabel(width, item.fields, unread);
    if (totals !== undefined) {
      options.onTotalsRow?.({ line: at, label: totals });
      return undefined;
    }
    if (beyond !== -1) {
      const cell = `${columnLetters(beyond + 1)}${at}`;
      const last = columnLetters(header.length);
      const message = `cell ${cell} is right of the header's last column ${last}: give its column a header or clear it`;
      return { kind: "error", line: at, error: { line: at, column: "", message }, cells };
    }
    if (problems.length === 0) return item;
    // The error file gets the cells as they were, formulas and dates included.
    item.cells = width;
    item.problems = problems;
    return item;
  };
}

/**
 * The reading of one sheet's rows (an .xlsx worksheet, an .ods table) as the CSV reader gives
 * them: the header is found among the first rows (HeaderSearch), lines are the sheet's row
 * numbers, blank and totals rows are skipped. A header that cannot be read is thrown as it
 * comes (HeaderRowError, which sheetError says as the file's).
 */
class SheetReader {
  private readonly search: HeaderSearch<SheetRow>;
  private item: ((row: SheetRow) => CsvItem | undefined) | undefined;

  constructor(private readonly context: SheetContext) {
    const { options } = context;
    this.search = new HeaderSearch<SheetRow>({ headerRow: options.headerRow, map: options.map });
  }

  /** Reads the next row: the items it gives (none, one, or the rows held while the header was sought) go to `out`. */
  offer(row: SheetRow, out: CsvItem[]): void {
    this.context.onRow?.();
    checkRowSize(row, this.context.label);
    if (this.item !== undefined) {
      const next = this.item(row);
      if (next !== undefined) out.push(next);
      return;
    }
    if (isBlank(row.cells)) return;
    const names = isFixListHeader(row.cells) ? readFixListCells(row.cells) : row.cells;
    const found = this.search.offer({ line: row.number, names: trimTrailingEmpty(names), row });
    if (found === undefined) return;
    this.item = headerFound(found, this.context);
    out.push(...heldItems(found, this.item));
  }

  /** The sheet ended: a header still sought is taken from the rows seen, or the sheet refused. */
  end(out: CsvItem[]): void {
    if (this.item !== undefined) return;
    const found = this.search.end();
    if (found === undefined) {
      const message = `sheet ${shownName(this.context.name)} is empty: no header row`;
      throw new OrderFileError(this.context.label, [{ line: 1, column: "", message }]);
    }
    out.push(...heldItems(found, headerFound(found, this.context)));
  }
}

function sheetError(error: unknown, context: SheetContext): unknown {
  return error instanceof HeaderRowError
    ? new OrderFileError(sheetLabel(context), [error.error])
    : error;
}

/** The items of a sheet's rows, each read by `read` (SheetReader), one at a time. */
export async function* sheetItems<R>(
  sheet: AsyncIterable<R>,
  read: (raw: R) => SheetRow,
  context: SheetContext,
): AsyncGenerator<CsvItem> {
  const reader = new SheetReader(context);
  const out: CsvItem[] = [];
  try {
    for await (const raw of sheet) {
      reader.offer(read(raw), out);
      for (const item of out.splice(0)) yield item;
    }
    reader.end(out);
    for (const item of out.splice(0)) yield item;
  } catch (error) {
    throw sheetError(error, context);
  }
}

/**
 * The items of a sheet's rows, given in batches, as batches (none empty): one promise a batch,
 * not a row, as the CSV reader's (docs/architecture/import.md, "Spreadsheets"). The items a
 * batch gave before a row is refused are given before the refusal.
 */
export async function* sheetItemBatches(
  batches: AsyncIterable<SheetRow[]>,
  context: SheetContext,
): AsyncGenerator<CsvItem[]> {
  const reader = new SheetReader(context);
  for await (const rows of batches) {
    const out: CsvItem[] = [];
    try {
      for (const row of rows) reader.offer(row, out);
    } catch (error) {
      if (out.length > 0) yield out;
      throw sheetError(error, context);
    }
    if (out.length > 0) yield out;
  }
  const out: CsvItem[] = [];
  try {
    reader.end(out);
  } catch (error) {
    throw sheetError(error, context);
  }
  if (out.length > 0) yield out;
}

/**
 * How a header error names the file: with its sheet when the workbook has others (a hidden
 * first sheet read by mistake was the puzzle: docs/order-files.md, "Spreadsheets as exported").
 */
function sheetLabel(context: SheetContext): string {
  return context.count > 1 ? `${context.label} (sheet ${shownName(context.name)})` : context.label;
}

/** The data rows read while the header was searched for, as items. */
function* heldItems(
  found: FoundHeader<SheetRow>,
  item: (row: SheetRow) => CsvItem | undefined,
): Generator<CsvItem> {
  for (const held of found.after) {
    const next = item(held.row);
    if (next !== undefined) yield next;
  }
}
