import ExcelJS from "exceljs";
import { UserError } from "../../errors/user-error.js";
import { type IgnoredColumn, resolveHeader } from "../header/header.js";
import type { RowError } from "../validation/row-error.js";
import {
  type CsvItem,
  isBlank,
  MAX_RECORD_CHARS,
  type ReadOrderRowsOptions,
  toRow,
} from "./csv-rows.js";
import { isFixListHeader, readFixListCells } from "./fix-list-cell.js";
import { OrderFileError } from "./order-file-error.js";
import { SharedStrings } from "./shared-strings.js";
import { columnLetters, readRow, type SheetRow, trimTrailingEmpty } from "./xlsx-cells.js";
import {
  decodeSharedStrings,
  decodeSheet,
  READER_OPTIONS,
  type ReaderEvent,
  type ReaderModel,
  SheetFiles,
  sharedText,
  sheetPosition,
  tooManyStrings,
  unzipGuard,
  workbookError,
} from "./xlsx-workbook.js";
import { fixZipEntriesEnd } from "./zip-entries-end.js";
import type { UnzipGuard } from "./zip-limits.js";

export interface ReadXlsxRowsOptions extends Omit<ReadOrderRowsOptions, "delimiter"> {
  /** The sheet to read, by name. @defaultValue the workbook's first sheet */
  sheet?: string;
  /**
   * The most the workbook's entries may unpack to, together; given, an entry's ratio to its
   * packed size is no longer checked (see zip-limits.ts). @defaultValue UNZIPPED_LIMITS
   */
  maxUnzippedBytes?: number;
}

/** What reading one worksheet needs besides its rows. */
interface SheetContext {
  name: string;
  label: string;
  options: ReadXlsxRowsOptions;
  strings: SharedStrings;
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
      message: `a row longer than ${MAX_RECORD_CHARS.toLocaleString("en-US")} characters`,
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
 * The rows of one worksheet as the CSV reader gives them: the first non-blank row is the
 * header, lines are the sheet's row numbers, blank rows are skipped. A formula, a date or an
 * error value in a column that maps to a field makes the row invalid, naming the cell; in an
 * ignored column it is kept as text (it is never sent).
 */
async function* sheetItems(
  sheet: AsyncIterable<ExcelJS.Row>,
  context: SheetContext,
): AsyncGenerator<CsvItem> {
  const { label, options } = context;
  let header: string[] | undefined;
  let ignored: IgnoredColumn[] = [];
  // An error file saved as a workbook: its cells were escaped as it was written (fix-list-cell.ts).
  let fixList = false;
  for await (const raw of sheet) {
    const row = readRow(raw, context.strings);
    context.onRow?.();
    checkRowSize(row, label);
    const line = row.number;
    const cells = fixList ? readFixListCells(row.cells) : row.cells;
    if (isBlank(cells)) continue;
    if (header === undefined) {
      fixList = isFixListHeader(cells);
      const names = trimTrailingEmpty(fixList ? readFixListCells(cells) : cells);
      const resolved = resolveHeader(names, options.map, line, options);
      if (!resolved.ok) throw new OrderFileError(label, resolved.errors);
      header = resolved.fields;
      ignored = resolved.ignored;
      options.onHeader?.({ line, names, renamed: resolved.renamed, ignored });
      continue;
    }
    const beyond = cells.findIndex((cell, i) => i >= header!.length && cell.trim() !== "");
    if (beyond !== -1) {
      const cell = `${columnLetters(beyond + 1)}${line}`;
      const last = columnLetters(header.length);
      const message = `cell ${cell} is right of the header's last column ${last}: give its column a header or clear it`;
      yield { kind: "error", line, error: { line, column: "", message }, cells };
      continue;
    }
    // Cells right of the header are blank (checked above): the row is the header's width.
    cells.length = header.length;
    for (let i = 0; i < cells.length; i++) cells[i] ??= "";
    const values = row.problems === undefined ? cells : cells.slice();
    const problems = row.problems === undefined ? [] : cellProblems(row, header, values);
    if (problems.length === 0) {
      yield toRow(line, header, ignored, cells);
      continue;
    }
    const item = toRow(line, header, ignored, values);
    // The error file gets the cells as they were, formulas and dates included.
    item.cells = cells;
    item.problems = problems;
    yield item;
  }
  if (header === undefined) {
    throw new OrderFileError(label, [
      {
        line: 1,
        column: "",
        message: `sheet ${JSON.stringify(context.name)} is empty: no header row`,
      },
    ]);
  }
}

/**
 * Reads an .xlsx workbook's first sheet (or `sheet`) with exceljs's streaming reader, as the
 * same items as readOrderRows: the rows are not all held in memory. The shared strings are,
 * compactly (SharedStrings), up to SHARED_STRINGS_LIMITS: a workbook past them is refused in
 * one line. exceljs writes each sheet to a temporary file when it comes before the shared
 * strings in the zip (as Excel saves them), and reads it back once the strings are known. A
 * workbook that unpacks past `maxUnzippedBytes` is refused before that, or stopped there.
 */
export async function* readXlsxRows(
  path: string,
  options: ReadXlsxRowsOptions = {},
): AsyncGenerator<CsvItem> {
  const label = options.label ?? path;
  fixZipEntriesEnd();
  let guard: UnzipGuard;
  try {
    guard = await unzipGuard(path, label, options.maxUnzippedBytes);
  } catch (error) {
    throw workbookError(label, error);
  }
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(guard.open(path), READER_OPTIONS);
  decodeSharedStrings(reader);
  const strings = new SharedStrings();
  const seen: string[] = [];
  let found = false;
  const events = (reader.parse() as unknown as AsyncIterable<ReaderEvent>)[Symbol.asyncIterator]();
  const sheets = new SheetFiles(events);
  try {
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      if (event.eventType === undefined) {
        if (!strings.add(sharedText(event.text))) throw tooManyStrings(label, strings);
        continue;
      }
      if (event.eventType !== "worksheet") continue;
      const sheet = event.value;
      sheets.came(sheet);
      seen.push(sheet.name);
      const model = reader as unknown as ReaderModel;
      const first = model.model?.sheets?.[0]?.name ?? sheet.name;
      const wanted =
        options.sheet === undefined ? sheet.name === first : sheet.name === options.sheet;
      if (found || !wanted) continue;
      found = true;
      const parsed = decodeSheet(sheet);
      const onRow = options.onPosition
        ? await sheetPosition(path, model, sheet, parsed, options.onPosition)
        : undefined;
      yield* sheetItems(sheet, { name: sheet.name, label, options, strings, onRow });
    }
    sheets.ended();
  } catch (error) {
    // Stopped by the guard: exceljs throws whatever its stream said; the refusal is the reason.
    throw guard.failure ?? workbookError(label, error);
  } finally {
    await sheets.discard();
    await guard.close();
  }
  if (found) return;
  if (seen.length === 0)
    throw new UserError(`${label}: not an .xlsx workbook (no worksheet in it)`);
  const names = seen.map((n) => JSON.stringify(n)).join(", ");
  throw new UserError(
    options.sheet === undefined
      ? `${label}: its first sheet is not a worksheet (worksheets: ${names}); name one with --sheet`
      : `${label}: no sheet named ${JSON.stringify(options.sheet)} (sheets: ${names})`,
  );
}
