import type { Readable } from "node:stream";
import { CsvError } from "csv-parse";
import { UserError } from "../../errors/user-error.js";
import { type IgnoredColumn, type RenamedColumn, resolveHeader } from "../header/header.js";
import { type FoundHeader, HeaderRowError, HeaderSearch } from "../header/header-row.js";
import { type TotalsRow, totalsLabel } from "../header/totals-row.js";
import type { RowError } from "../validation/row-error.js";
import { type ParsedRecord, type RecordSource, readRecords } from "./csv-records.js";
import { recordsInThread } from "./csv-records-thread.js";
import { isFixListHeader, readFixListCells } from "./fix-list-cell.js";
import { OrderFileError } from "./order-file-error.js";
import { regularFileSize } from "./order-input.js";

/** A data row: cells keyed by field (after `--map`); `line` is where the record starts. */
export interface CsvRow {
  kind: "row";
  line: number;
  fields: Record<string, string>;
  /**
   * The cells of ignored columns, by header, only when there are such columns: for the error
   * file, which keeps the whole row. Never part of the order.
   */
  ignored?: Record<string, string>;
  /**
   * Every cell of the row as it was, in file order (ignored columns included): the error file
   * writes the row back from them. Not trimmed.
   */
  cells: string[];
  /**
   * Cells that could not be read as a value (a spreadsheet's formula or date), by column: the
   * row is invalid. Their `fields` hold "" and validation does not speak of them again.
   */
  problems?: RowError[];
}

/** A data row that cannot be read as a row (wrong number of fields); reading goes on. */
interface CsvRowProblem {
  kind: "error";
  line: number;
  error: RowError;
  /** The row's cells as they were, for the error file. */
  cells: string[];
}

export type CsvItem = CsvRow | CsvRowProblem;

export interface ReadOrderRowsOptions {
  /** One character. @defaultValue `,` */
  delimiter?: string;
  /** Source header -> field, from `--map 'Email Address=email'`. */
  map?: Record<string, string>;
  /** How errors name the input. @defaultValue the path, or `input` for a stream */
  label?: string;
  /** A column that maps to no field is an error, not ignored. @defaultValue false */
  strictColumns?: boolean;
  /** No email column is needed (`--distribution link`). @defaultValue false */
  emailOptional?: boolean;
  /** Told once, when the header is read, how its columns were matched. */
  onHeader?: (header: HeaderReport) => void;
  /** Told before each row is yielded: bytes of the input parsed up to its end (progress). */
  onPosition?: (bytes: number) => void;
  /**
   * The line (an .xlsx: the row) the header is on, `--header-row N`: the rows above it are left
   * out. @defaultValue found among the first rows (header-row.ts)
   */
  headerRow?: number;
  /** Told of each totals row left out of the orders (totals-row.ts). */
  onTotalsRow?: (row: TotalsRow) => void;
  /** The text's encoding, when not UTF-8: UTF-16 with a BOM. @defaultValue UTF-8 */
  encoding?: "utf-16le" | "utf-16be";
  /**
   * A regular file of this many bytes or more is parsed in a worker thread
   * (csv-records-thread.ts); anything else (a pipe, a device, a smaller file) in this one.
   * @defaultValue THREAD_FROM_BYTES
   */
  threadFrom?: number;
}

/** How the header's columns were matched: reported once, before the first row. */
export interface HeaderReport {
  /** The line the header is on. */
  line: number;
  /** The header's cells as they were, in file order: the error file repeats them. */
  names: string[];
  /** Columns whose header is not their field's name (a synonym or `--map`). */
  renamed: RenamedColumn[];
  /** Columns that map to no field: kept out of the orders. */
  ignored: IgnoredColumn[];
  /** Lines (rows) of the non-blank rows above the header, left out: title rows. */
  skipped: number[];
  /** How the header was found: searched for, or named by `--header-row`. */
  by: "search" | "option";
  /**
   * An .xlsx workbook's sheet read, its hidden sheets skipped, and how many sheets it holds
   * (the sheet is named in messages when it has others).
   */
  sheet?: { name: string; hidden: string[]; count: number };
}

/** Cells that are trimmed: identifiers and amounts, where stray spaces are never meant. */
const TRIMMED = new Set(["email", "product_code", "face_value"]);

function checkDelimiter(delimiter: string): string {
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new UserError(
      `--delimiter must be one character such as ',' or ';' (got ${JSON.stringify(delimiter)})`,
    );
  }
  return delimiter;
}

export function toRow(
  line: number,
  header: readonly string[],
  ignored: readonly IgnoredColumn[],
  cells: readonly string[],
): CsvRow {
  const fields: Record<string, string> = {};
  for (let index = 0; index < header.length; index++) {
    const field = header[index]!;
    if (field === "") continue;
    const cell = cells[index] ?? "";
    fields[field] = TRIMMED.has(field) ? cell.trim() : cell;
  }
  if (ignored.length === 0) return { kind: "row", line, fields, cells: [...cells] };
  // No prototype: a header is any text, "__proto__" included.
  const rest: Record<string, string> = Object.create(null);
  for (const { index, name } of ignored) rest[name || `column ${index + 1}`] = cells[index] ?? "";
  return { kind: "row", line, fields, ignored: rest, cells: [...cells] };
}

/** Spreadsheets export rows of empty cells (",,,") for deleted lines; they are blank lines. */
export function isBlank(cells: readonly string[]): boolean {
  return cells.every((cell) => cell.trim() === "");
}

function fileError(label: string, error: unknown, records: RecordSource): Error {
  if (error instanceof OrderFileError || error instanceof UserError) return error;
  if (error instanceof HeaderRowError) return new OrderFileError(label, [error.error]);
  if (error instanceof CsvError) {
    const line = records.failedLine();
    const message =
      error.code === "CSV_MAX_RECORD_SIZE"
        ? "a record longer than 1,000,000 characters (a quote that is never closed?)"
        : error.code === "CSV_QUOTE_NOT_CLOSED"
          ? "a quoted field starting on this line or after it is never closed"
          : error.message;
    return new OrderFileError(label, [{ line, column: "", message }]);
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") {
    return new UserError(`cannot read ${label}: ${(error as Error).message}`);
  }
  return error as Error;
}

/**
 * What reading rows needs once the header is found: the header's fields, and how a record is
 * made an item (undefined: a blank or totals row, left out).
 */
function headerFound(
  found: FoundHeader<ParsedRecord>,
  label: string,
  options: ReadOrderRowsOptions,
): (record: ParsedRecord) => CsvItem | undefined {
  const { line, names } = found.header;
  // An error file's cells were escaped as it was written (fix-list-cell.ts).
  const fixList = isFixListHeader(found.header.row.cells);
  const resolved = resolveHeader(names, {
    map: options.map,
    line,
    strictColumns: options.strictColumns,
    emailOptional: options.emailOptional,
  });
  if (!resolved.ok) throw new OrderFileError(label, resolved.errors);
  const header = resolved.fields;
  const { ignored, renamed } = resolved;
  options.onHeader?.({
    line,
    names: [...names],
    renamed,
    ignored,
    skipped: found.skipped,
    by: found.by,
  });
  // Progress counts the UTF-8 the parser reads; UTF-16 takes about twice the bytes on disk.
  const scale = options.encoding === undefined ? 1 : 2;
  return (record) => {
    const cells = fixList ? readFixListCells(record.cells) : record.cells;
    if (isBlank(cells)) return undefined;
    options.onPosition?.(record.bytes * scale);
    const row = toRow(record.line, header, ignored, cells);
    const totals = totalsLabel(cells, row.fields);
    if (totals !== undefined) {
      options.onTotalsRow?.({ line: record.line, label: totals });
      return undefined;
    }
    if (cells.length === header.length) return row;
    const message = `row has ${cells.length} fields, header has ${header.length}`;
    const at = record.line;
    return { kind: "error", line: at, error: { line: at, column: "", message }, cells: [...cells] };
  };
}

/**
 * Reads an order CSV as a stream and yields its data rows in batches, as the parser gives them
 * (never empty; at most RECORDS_BUFFERED and a few more): one promise a batch rather than one a row
 * and a generator, which a million rows feel. Memory does not grow with the file. The header is
 * found first (HeaderSearch: title rows above it are left out) and checked (missing or
 * duplicate columns, and with `strictColumns` unknown ones, throw an OrderFileError naming its
 * line); a row with the wrong number of fields is yielded as a problem and reading goes on.
 * Blank lines and totals rows are skipped.
 */
export async function* readOrderRowBatches(
  input: Readable | string,
  options: ReadOrderRowsOptions = {},
): AsyncGenerator<CsvItem[]> {
  const label = options.label ?? (typeof input === "string" ? input : "input");
  const reading = {
    delimiter: checkDelimiter(options.delimiter ?? ","),
    encoding: options.encoding,
  };
  const threadFrom = options.threadFrom ?? THREAD_FROM_BYTES;
  const records =
    typeof input === "string" && (await isFileOfAtLeast(input, threadFrom))
      ? recordsInThread(input, reading)
      : readRecords(input, reading);
  const search = new HeaderSearch<ParsedRecord>({ headerRow: options.headerRow, map: options.map });
  let item: ((record: ParsedRecord) => CsvItem | undefined) | undefined;
  try {
    for await (const batch of records.batches) {
      const items: CsvItem[] = [];
      for (const record of batch) {
        if (item !== undefined) {
          const next = item(record);
          if (next !== undefined) items.push(next);
          continue;
        }
        if (isBlank(record.cells)) continue;
        const names = isFixListHeader(record.cells) ? readFixListCells(record.cells) : record.cells;
        const found = search.offer({ line: record.line, names, row: record });
        if (found === undefined) continue;
        item = headerFound(found, label, options);
        items.push(...heldItems(found, item));
      }
      if (items.length > 0) yield items;
    }
    if (item === undefined) {
      const found = search.end();
      if (found === undefined) {
        const message = "the file has no header row";
        throw new OrderFileError(label, [{ line: 1, column: "", message }]);
      }
      item = headerFound(found, label, options);
      const items = heldItems(found, item);
      if (items.length > 0) yield items;
    }
  } catch (error) {
    throw fileError(label, error, records);
  } finally {
    await records.close();
  }
}

/**
 * From this size on a file's records are parsed in a worker thread, beside the checks of the
 * rows before them (docs/architecture/import.md, "Parsing beside the checks"): about 20,000
 * rows, where starting the thread costs a few hundredths of the parse it takes over.
 */
const THREAD_FROM_BYTES = 1 << 20;

/** Whether `path` is a regular file of `bytes` or more: a pipe or a device is read here. */
async function isFileOfAtLeast(path: string, bytes: number): Promise<boolean> {
  return ((await regularFileSize(path)) ?? -1) >= bytes;
}

/** The data rows read while the header was searched for, as items. */
function heldItems<R>(found: FoundHeader<R>, item: (row: R) => CsvItem | undefined): CsvItem[] {
  const items: CsvItem[] = [];
  for (const held of found.after) {
    const next = item(held.row);
    if (next !== undefined) items.push(next);
  }
  return items;
}
