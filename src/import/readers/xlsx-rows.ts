import { stat } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
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
import { SHARED_STRINGS_LIMITS, SharedStrings } from "./shared-strings.js";
import { fixZipEntriesEnd } from "./zip-entries-end.js";
import { zipEntrySizes } from "./zip-entry-sizes.js";
import { checkZipDirectory, UnzipGuard, unzippedLimits } from "./zip-limits.js";

export interface ReadXlsxRowsOptions extends Omit<ReadOrderRowsOptions, "delimiter"> {
  /** The sheet to read, by name. @defaultValue the workbook's first sheet */
  sheet?: string;
  /**
   * The most the workbook's entries may unpack to, together; given, an entry's ratio to its
   * packed size is no longer checked (see zip-limits.ts). @defaultValue UNZIPPED_LIMITS
   */
  maxUnzippedBytes?: number;
}

/** A cell as text, and why its value cannot be taken when it cannot (a formula, a date...). */
interface CellText {
  text: string;
  /** Set when the value must not be read as the cell's text (a formula, a date...). */
  problem?: string;
}

/**
 * A number as its shortest round-trip text: the cell holds a double, and "25.1" is the one
 * decimal that reads back as it. No arithmetic: the money rules take it from there, as text.
 * An integer beyond 2^53 may not be the one typed, so it is refused rather than changed.
 */
function numberProblem(value: number): string | undefined {
  if (!Number.isFinite(value)) return "is not a finite number";
  if (Number.isInteger(value) && !Number.isSafeInteger(value))
    return `holds the number ${value}, too large to be read exactly: store it as text`;
  return undefined;
}

function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
}

/**
 * The cells that are neither text nor a number, as the text a CSV export would show: rare, so
 * they may cost an object each (the common cells cost none: see readRow).
 */
function otherCellText(value: ExcelJS.CellValue, strings: SharedStrings): CellText {
  if (value === null || value === undefined) return { text: "" };
  if (typeof value === "string") return { text: value };
  if (typeof value === "number") return { text: String(value), problem: numberProblem(value) };
  if (typeof value === "boolean") return { text: value ? "TRUE" : "FALSE" };
  if (value instanceof Date) {
    const text = dateText(value);
    return {
      text,
      problem: `holds a date (${text}); dates are not read as order values: format the cell as text and type the value`,
    };
  }
  if ("sharedString" in value) {
    const index = (value as { sharedString: number }).sharedString;
    const text = strings.get(index);
    return text === undefined
      ? { text: "", problem: `names shared string ${index}, which the workbook does not hold` }
      : { text };
  }
  if ("formula" in value || "sharedFormula" in value) {
    const formula = "formula" in value ? value.formula : value.sharedFormula;
    const result = "result" in value ? value.result : undefined;
    const shown =
      result === undefined || result === null
        ? ""
        : otherCellText(result as ExcelJS.CellValue, strings).text;
    return {
      text: shown,
      problem: `holds a formula (=${formula ?? ""}); formulas are not read: paste the value instead (Paste Special > Values)`,
    };
  }
  if ("richText" in value) return { text: value.richText.map((part) => part.text).join("") };
  if ("error" in value) {
    return { text: String(value.error), problem: `holds the error ${String(value.error)}` };
  }
  if ("text" in value) {
    const text = (value as { text: unknown }).text;
    return typeof text === "string" ? { text } : otherCellText(text as ExcelJS.CellValue, strings);
  }
  return { text: "", problem: "holds a value that cannot be read as text" };
}

/** "A".."Z", "AA"...: the column letters of a 1-based column number. */
function columnLetters(column: number): string {
  let letters = "";
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

/** The index of a cell that names a shared string (as `sharedStrings: "emit"` leaves it). */
function sharedIndex(value: ExcelJS.CellValue): number | undefined {
  if (typeof value !== "object" || value === null || !("sharedString" in value)) return undefined;
  const index = (value as { sharedString: unknown }).sharedString;
  return typeof index === "number" ? index : undefined;
}

/** A row's cells as text; `problems[i]`, when set, is why cell i cannot be taken as a value. */
interface SheetRow {
  number: number;
  cells: string[];
  problems?: (string | undefined)[];
  /** Characters in all its cells. */
  chars: number;
}

/**
 * A row's cells as text. One string per cell and no other object for text and numbers, which
 * is nearly every cell: every object a row makes is garbage the import's heap grows with.
 */
function readRow(row: ExcelJS.Row, strings: SharedStrings): SheetRow {
  const cells: string[] = [];
  let problems: (string | undefined)[] | undefined;
  let chars = 0;
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    const value = cell.value;
    let text: string | undefined;
    let problem: string | undefined;
    if (typeof value === "string") text = value;
    else if (typeof value === "number") {
      text = String(value);
      problem = numberProblem(value);
    } else {
      const index = sharedIndex(value);
      if (index !== undefined) text = strings.get(index);
      if (text === undefined) {
        const other = otherCellText(value, strings);
        text = other.text;
        problem = other.problem;
      }
    }
    cells[column - 1] = text;
    chars += text.length;
    if (problem === undefined) return;
    problems ??= [];
    problems[column - 1] = problem;
  });
  for (let i = 0; i < cells.length; i++) cells[i] ??= "";
  return { number: row.number, cells, problems, chars };
}

function trimTrailingEmpty(cells: string[]): string[] {
  let end = cells.length;
  while (end > 0 && cells[end - 1]!.trim() === "") end--;
  return cells.slice(0, end);
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

/** The reader's failure in one line: a zip that is not a workbook, a damaged file. */
function workbookError(label: string, error: unknown): Error {
  if (error instanceof UserError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const message = (error as Error).message ?? String(error);
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") {
    return new UserError(`cannot read ${label}: ${message}`);
  }
  const first = message.split("\n")[0];
  return new UserError(`${label}: not a readable .xlsx workbook (${first})`);
}

/** What exceljs's reader knows of the workbook once its sheets come (not in its typings). */
interface ReaderModel {
  model?: { sheets?: { name: string; rId: string }[] };
  workbookRels?: { Id: string; Target: string }[];
}

/**
 * What the streaming reader's parse() yields (exceljs 4.4; not in its typings): with
 * `sharedStrings: "emit"` each shared string comes as it is, `{index, text}`, with no
 * eventType (so its own read() never emits them); worksheets and hyperlinks as events.
 */
type ReaderEvent =
  | { eventType?: undefined; index: number; text: unknown }
  | { eventType: "worksheet"; value: WorksheetReader }
  | { eventType: "hyperlinks"; value: unknown };

/** A worksheet of the streaming reader: its rows, and the chunks of XML they are parsed from. */
type WorksheetReader = AsyncIterable<ExcelJS.Row> & {
  name: string;
  iterator: AsyncIterable<Buffer | string>;
};

/** A shared string as plain text: rich text's runs joined, an empty `<si>` as "". */
function sharedText(text: unknown): string {
  if (typeof text === "string") return text;
  if (text !== null && typeof text === "object" && "richText" in text) {
    const runs = (text as { richText: { text?: unknown }[] }).richText;
    return runs.map((run) => (typeof run.text === "string" ? run.text : "")).join("");
  }
  return "";
}

function tooManyStrings(label: string, strings: SharedStrings): UserError {
  const limit = SHARED_STRINGS_LIMITS;
  return new UserError(
    `${label}: its shared strings table passes the limit of ${limit.count.toLocaleString("en-US")} strings or ${limit.bytes / 2 ** 20} MB of text ` +
      `(${strings.count.toLocaleString("en-US")} strings, ${(strings.bytes / 2 ** 20).toFixed(0)} MB read): ` +
      "it would be held in memory whole; save the sheet as CSV UTF-8 and import that",
  );
}

/**
 * exceljs 4.4 decodes each chunk of XML on its own (a TextDecoder not told to stream), so a
 * character whose UTF-8 bytes straddle two chunks comes out as two U+FFFD: in a large file,
 * "Zoë" is now and then read as "Zo\u{FFFD}\u{FFFD}", silently. Its parser takes text as it is,
 * so the sheet and the shared strings are given to it as text decoded across chunks.
 */
function decodeSheet(sheet: WorksheetReader): { bytes: number } {
  const counter = { bytes: 0 };
  const chunks = sheet.iterator;
  sheet.iterator = (async function* text() {
    const decoder = new StringDecoder("utf8");
    for await (const chunk of chunks) {
      if (typeof chunk === "string") {
        yield chunk;
        continue;
      }
      counter.bytes += chunk.length;
      yield decoder.write(chunk);
    }
    yield decoder.end();
  })();
  return counter;
}

/** See decodeSheet: the shared strings entry (a stream) is read as UTF-8 text across chunks. */
function decodeSharedStrings(reader: ExcelJS.stream.xlsx.WorkbookReader): void {
  const internal = reader as unknown as {
    _parseSharedStrings?: (entry: NodeJS.ReadableStream) => AsyncGenerator<unknown>;
  };
  const parse = internal._parseSharedStrings;
  if (typeof parse !== "function") throw new Error("exceljs has no _parseSharedStrings to wrap");
  internal._parseSharedStrings = function textEntry(entry) {
    entry.setEncoding("utf8");
    return parse.call(this, entry);
  };
}

/**
 * The sheet's progress as a position in the file (options.onPosition): a workbook is
 * compressed, so no byte of it maps to a row; the share of the sheet's XML parsed, from its
 * size in the zip's central directory, is given as that share of the file's bytes.
 */
async function sheetPosition(
  path: string,
  reader: ReaderModel,
  sheet: WorksheetReader,
  parsed: { bytes: number },
  onPosition: (bytes: number) => void,
): Promise<(() => void) | undefined> {
  const rId = reader.model?.sheets?.find((s) => s.name === sheet.name)?.rId;
  const target = reader.workbookRels?.find((rel) => rel.Id === rId)?.Target;
  if (target === undefined) return undefined;
  const entry = target.startsWith("/") ? target.slice(1) : `xl/${target}`;
  const [sizes, file] = await Promise.all([zipEntrySizes(path), stat(path)]);
  const total = sizes.get(entry);
  if (!total) return undefined;
  return () => onPosition(Math.floor((file.size * Math.min(parsed.bytes, total)) / total));
}

/**
 * The temporary files exceljs unpacks the sheets to (see readXlsxRows): each is removed, and its
 * descriptors closed, only when its reader asks for the event after that sheet's. Reading stops
 * early on a refused row, a bad header or a caller that stops; the rest of the events are then
 * asked for, unread, so that no file or descriptor outlives the import. They come once the whole
 * zip is read, so this reads no more of it; before the first one (a refusal while the zip is
 * read) nothing is asked for, and the files go when the process exits.
 */
class SheetFiles {
  private readonly streams: { destroy?: () => void }[] = [];
  private finished = false;

  constructor(private readonly events: AsyncIterator<ReaderEvent>) {}

  /**
   * A sheet's event came: its stream (a temporary file's) is closed at the end, read or not.
   * exceljs removes the file when the next event is asked for, which may be before the stream
   * has opened it: the stream of a sheet skipped unread then fails to open (ENOENT) with no one
   * listening, an uncaught exception. A sheet that is read reports its errors through its
   * iterator, so this listener hides nothing.
   */
  came(sheet: WorksheetReader): void {
    const stream = sheet.iterator as {
      destroy?: () => void;
      on?: (e: string, f: () => void) => void;
    };
    stream.on?.("error", () => {});
    this.streams.push(stream);
  }

  ended(): void {
    this.finished = true;
  }

  async discard(): Promise<void> {
    try {
      if (!this.finished && this.streams.length > 0) {
        for (let next = await this.events.next(); !next.done; next = await this.events.next())
          if (next.value.eventType === "worksheet") this.came(next.value.value);
      }
    } catch {
      // The reading failed already; the failure that stopped it is the one to tell.
    } finally {
      for (const stream of this.streams) stream.destroy?.();
    }
  }
}

/** How readXlsxRows has exceljs read a workbook. */
export const READER_OPTIONS: Partial<ExcelJS.stream.xlsx.WorkbookStreamReaderOptions> = {
  worksheets: "emit",
  // Emitted to SharedStrings, not cached by exceljs as one JS string (or object) each.
  sharedStrings: "emit",
  // Styles tell a date from a number.
  styles: "cache",
  hyperlinks: "ignore",
  entries: "ignore",
};

/**
 * Checks the workbook's unpacked size from its zip's directory, before anything is unpacked,
 * and returns the guard that counts it while exceljs unpacks (zip-limits.ts).
 */
async function unzipGuard(path: string, label: string, maxBytes?: number): Promise<UnzipGuard> {
  const limits = unzippedLimits(maxBytes);
  const [stated, file] = await Promise.all([checkZipDirectory(path, label, limits), stat(path)]);
  return new UnzipGuard(label, limits, file.size, stated);
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
