import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { StringDecoder } from "node:string_decoder";
import type ExcelJS from "exceljs";
import { UserError } from "../../errors/user-error.js";
import { grouped } from "../../grouped.js";
import {
  SHARED_STRINGS_LIMITS,
  type SharedStrings,
  SharedStringsParser,
} from "./shared-strings.js";
import { SheetXml } from "./sheet-xml.js";
import { zipEntrySizes } from "./zip-entry-sizes.js";
import { checkZipDirectory, UnzipGuard, unzippedLimits } from "./zip-limits.js";

/** The reader's failure in one line: a zip that is not a workbook, a damaged file. */
export function workbookError(label: string, error: unknown): Error {
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
export interface ReaderModel {
  model?: { sheets?: { id?: number; name: string; rId: string; state?: string }[] };
  workbookRels?: { Id: string; Target: string; Type?: string }[];
}

/**
 * The zip entry a relationship of xl/workbook.xml points at. The format allows a target
 * relative to xl/ (`worksheets/sheet1.xml`, as Excel writes it, or `./worksheets/...`) or
 * absolute from the package's root (`/xl/worksheets/sheet1.xml`, as openpyxl writes it).
 */
function workbookPart(target: string): string {
  const path = target.startsWith("/") ? target.slice(1) : `xl/${target}`;
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}

type SheetParser = (iterator: unknown, sheetNo: string) => Generator<ReaderEvent>;

/**
 * exceljs 4.4 names a worksheet from the workbook's relationship only when its target is written
 * `worksheets/sheetN.xml`: a workbook from openpyxl (absolute targets), and so every pandas
 * `to_excel`, had sheets named "Sheet1"... and no hidden state. Each worksheet is named here from
 * the relationship whose target resolves to its entry (workbookPart), whatever the producer
 * (docs/architecture/import.md, "Spreadsheets", "Sheet names").
 */
export function nameSheets(reader: ExcelJS.stream.xlsx.WorkbookReader): void {
  const internal = reader as unknown as { _parseWorksheet?: SheetParser } & ReaderModel;
  const parse = internal._parseWorksheet;
  if (typeof parse !== "function") throw new Error("exceljs has no _parseWorksheet to wrap");
  internal._parseWorksheet = function* namedSheets(iterator, sheetNo) {
    for (const event of parse.call(this, iterator, sheetNo)) {
      if (event.eventType === "worksheet")
        nameSheet(internal, event.value, `xl/worksheets/sheet${sheetNo}.xml`);
      yield event;
    }
  };
}

function nameSheet(model: ReaderModel, sheet: WorksheetReader, entry: string): void {
  const rel = model.workbookRels?.find((r) => workbookPart(r.Target) === entry);
  const found = rel && model.model?.sheets?.find((s) => s.rId === rel.Id);
  if (found === undefined) return;
  sheet.name = found.name;
  (sheet as { state?: string }).state = found.state;
}

/**
 * What the streaming reader's parse() yields (exceljs 4.4; not in its typings): with
 * `sharedStrings: "emit"` each shared string comes as it is, `{index, text}`, with no
 * eventType (so its own read() never emits them); worksheets and hyperlinks as events.
 */
export type ReaderEvent =
  | { eventType?: undefined; index: number; text: unknown }
  | { eventType: "worksheet"; value: WorksheetReader }
  | { eventType: "hyperlinks"; value: unknown };

/** A worksheet of the streaming reader: its rows, and the chunks of XML they are parsed from. */
type WorksheetReader = AsyncIterable<ExcelJS.Row> & {
  name: string;
  iterator: AsyncIterable<Buffer | string>;
};

/** A shared string as plain text: rich text's runs joined, an empty `<si>` as "". */
export function sharedText(text: unknown): string {
  if (typeof text === "string") return text;
  if (text !== null && typeof text === "object" && "richText" in text) {
    const runs = (text as { richText: { text?: unknown }[] }).richText;
    return runs.map((run) => (typeof run.text === "string" ? run.text : "")).join("");
  }
  return "";
}

export function tooManyStrings(label: string, strings: SharedStrings): UserError {
  const limit = SHARED_STRINGS_LIMITS;
  return new UserError(
    `${label}: its shared strings table passes the limit of ${grouped(limit.count)} strings or ${limit.bytes / 2 ** 20} MB of text ` +
      `(${grouped(strings.count)} strings, ${(strings.bytes / 2 ** 20).toFixed(0)} MB read): ` +
      "it would be held in memory whole; save the sheet as CSV UTF-8 and import that",
  );
}

/**
 * exceljs 4.4 decodes each chunk of XML on its own (a TextDecoder not told to stream), so a
 * character whose UTF-8 bytes straddle two chunks comes out as two U+FFFD: in a large file,
 * "Zoë" is now and then read as "Zo\u{FFFD}\u{FFFD}", silently. Its parser takes text as it is,
 * so the sheet and the shared strings are given to it as text decoded across chunks.
 */
export function decodeSheet(sheet: WorksheetReader): { bytes: number } {
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

/**
 * exceljs's reading of the shared strings entry replaced by SharedStringsParser over SheetXml,
 * the entry read as UTF-8 text across chunks (see decodeSheet): exceljs's saxes was about a
 * fifth of an import's reading of the workbook (docs/architecture/import.md, "Spreadsheets").
 * Each string comes as exceljs's own `sharedStrings: "emit"` gives it, `{index, text}`.
 */
export function readSharedStrings(reader: ExcelJS.stream.xlsx.WorkbookReader): void {
  const internal = reader as unknown as {
    _parseSharedStrings?: (entry: NodeJS.ReadableStream) => AsyncGenerator<unknown>;
  };
  if (typeof internal._parseSharedStrings !== "function")
    throw new Error("exceljs has no _parseSharedStrings to replace");
  internal._parseSharedStrings = sharedStringsOf;
}

/**
 * The shared strings of the entry, as exceljs's reader emits them.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export async function* sharedStringsOf(
  entry: NodeJS.ReadableStream,
): AsyncGenerator<{ index: number; text: string }> {
  entry.setEncoding("utf8");
  const parser = new SharedStringsParser();
  const xml = new SheetXml(parser, "the shared strings' XML");
  let index = 0;
  for await (const chunk of entry) {
    xml.write(chunk as string);
    for (const text of parser.strings.splice(0)) yield { index: index++, text };
  }
}

/**
 * The sheet's progress as a position in the file (options.onPosition): a workbook is
 * compressed, so no byte of it maps to a row; the share of the sheet's XML parsed, from its
 * size in the zip's central directory, is given as that share of the file's bytes.
 */
export async function sheetPosition(
  path: string,
  {
    reader,
    sheet,
    parsed,
    onPosition,
  }: {
    reader: ReaderModel;
    sheet: WorksheetReader;
    parsed: { bytes: number };
    onPosition: (bytes: number) => void;
  },
): Promise<(() => void) | undefined> {
  const rId = reader.model?.sheets?.find((s) => s.name === sheet.name)?.rId;
  const target = reader.workbookRels?.find((rel) => rel.Id === rId)?.Target;
  if (target === undefined) return undefined;
  const entry = workbookPart(target);
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
export class SheetFiles {
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

/**
 * exceljs's streaming reader, required alone: the package's entry loads its writers, its CSV
 * support and the rest as well, which an import never uses (docs/architecture/import.md,
 * "Spreadsheets").
 */
export function workbookReaderClass(): typeof ExcelJS.stream.xlsx.WorkbookReader {
  const fromExceljs = createRequire(createRequire(import.meta.url).resolve("exceljs"));
  return fromExceljs("./lib/stream/xlsx/workbook-reader.js");
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
export async function unzipGuard(
  path: string,
  label: string,
  maxBytes?: number,
): Promise<UnzipGuard> {
  const limits = unzippedLimits(maxBytes);
  const [stated, file] = await Promise.all([checkZipDirectory(path, label, limits), stat(path)]);
  return new UnzipGuard(label, limits, file.size, stated);
}
