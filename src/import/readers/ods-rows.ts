import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Duplex, Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { UserError } from "../../errors/user-error.js";
import { nameList } from "../header/name-list.js";
import type { CsvItem } from "./csv-rows.js";
import { OdsContent, type OdsRowRun, type OdsTable } from "./ods-content.js";
import { type ReadSheetOptions, sheetItems } from "./sheet-items.js";
import type { SheetRow } from "./xlsx-cells.js";
import { zipEntrySizes } from "./zip-entry-sizes.js";
import { readZipSheet } from "./zip-sheet.js";

/** An entry of unzipper's Parse stream, as much as the reader touches. */
type ZipEntry = Readable & { path: string; autodrain(): unknown };

/**
 * unzipper's `Parse`, from the very module exceljs requires: UnzipGuard hooks it there, so an
 * .ods file is counted and stopped as an .xlsx is (zip-limits.ts).
 */
function zipParser(): Duplex {
  const fromExceljs = createRequire(createRequire(import.meta.url).resolve("exceljs"));
  const unzipper = fromExceljs("unzipper") as { Parse: (options: object) => Duplex };
  return unzipper.Parse({ forceStream: true });
}

/** The reader's failure in one line: a zip that is not a spreadsheet, a damaged file. */
function odsError(label: string, error: unknown): Error {
  if (error instanceof UserError) return error;
  const first = ((error as Error).message ?? String(error)).split("\n")[0];
  return new UserError(`${label}: not a readable .ods spreadsheet (${first})`);
}

/** Which table is read: the one named, else the first not hidden; the hidden ones skipped. */
class TableChoice {
  readonly hidden: string[] = [];
  constructor(private readonly named: string | undefined) {}

  accept(table: OdsTable): boolean {
    if (this.named !== undefined) return table.name === this.named;
    if (table.hidden) this.hidden.push(table.name);
    return !table.hidden;
  }

  /** Why nothing was read, once the whole content is. */
  refusal(label: string, tables: OdsTable[]): UserError {
    const names = nameList(
      tables.map((t) => t.name),
      10,
    );
    if (this.named !== undefined)
      return new UserError(
        `${label}: no sheet named ${JSON.stringify(this.named)} (sheets: ${names})`,
      );
    if (tables.length > 0)
      return new UserError(
        `${label}: every sheet is hidden (${names}); name the one to read with --sheet`,
      );
    return new UserError(`${label}: not an .ods spreadsheet (no sheet in it)`);
  }
}

/** content.xml's bytes as text across chunks, counted (for progress). */
async function* contentText(entry: ZipEntry, parsed: { bytes: number }): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  for await (const chunk of entry as AsyncIterable<Buffer>) {
    parsed.bytes += chunk.length;
    yield decoder.write(chunk);
  }
  yield decoder.end();
}

/** Each row of a run, a row repeated N times as N rows (one at a time: nothing is expanded). */
async function* tableRows(
  first: OdsRowRun[],
  content: OdsContent,
  text: AsyncIterator<string>,
): AsyncGenerator<SheetRow> {
  let runs = first;
  let ended = false;
  for (;;) {
    for (const { row, repeat } of runs)
      for (let i = 0; i < repeat; i++)
        yield i === 0 ? row : { ...row, number: row.number + i, cells: row.cells.slice() };
    if (content.done || ended) return;
    const next = await text.next();
    ended = next.done === true;
    runs = next.done ? content.end() : content.write(next.value);
  }
}

/** The position callback of options.onPosition: content.xml's share parsed, as the file's. */
async function positionOf(
  path: string,
  parsed: { bytes: number },
  onPosition: ((bytes: number) => void) | undefined,
): Promise<(() => void) | undefined> {
  if (onPosition === undefined) return undefined;
  const [sizes, file] = await Promise.all([zipEntrySizes(path), stat(path)]);
  const total = sizes.get("content.xml");
  if (!total) return undefined;
  return () => onPosition(Math.floor((file.size * Math.min(parsed.bytes, total)) / total));
}

/**
 * Reads an .ods spreadsheet's first visible table (or `sheet`) as the same items as
 * readXlsxRows: its content.xml is parsed as it is unzipped (saxes), a row at a time, and the
 * reading stops at the end of the table read. The zip is guarded as a workbook's (size and
 * ratio: zip-limits.ts); hidden tables (a table style with `table:display="false"`) are
 * skipped; formulas, dates and error values in a column that is read make the row invalid,
 * naming the cell (docs/architecture/import.md, "Spreadsheets", ".ods").
 */
export async function* readOdsRows(
  path: string,
  options: ReadSheetOptions = {},
): AsyncGenerator<CsvItem> {
  const label = options.label ?? path;
  const opening = { label, maxUnzippedBytes: options.maxUnzippedBytes, failed: odsError };
  yield* readZipSheet(path, opening, (source) => odsItems(path, source, options));
}

/** The items of content.xml's table read, from the guarded stream. */
async function* odsItems(
  path: string,
  source: Readable,
  options: ReadSheetOptions,
): AsyncGenerator<CsvItem> {
  const zip = zipParser();
  source.pipe(zip);
  try {
    for await (const entry of zip as AsyncIterable<ZipEntry>) {
      if (entry.path !== "content.xml") {
        entry.autodrain();
        continue;
      }
      yield* contentItems(path, entry, options);
      return;
    }
    throw new UserError(
      `${options.label ?? path}: not a readable .ods spreadsheet (no content.xml in it)`,
    );
  } finally {
    source.unpipe(zip);
    source.destroy();
    zip.destroy();
  }
}

/** The items of the table content.xml holds that is read (see readOdsRows). */
async function* contentItems(
  path: string,
  entry: ZipEntry,
  options: ReadSheetOptions,
): AsyncGenerator<CsvItem> {
  const label = options.label ?? path;
  const choice = new TableChoice(options.sheet);
  const content = new OdsContent(label, (table) => choice.accept(table));
  const parsed = { bytes: 0 };
  const text = contentText(entry, parsed)[Symbol.asyncIterator]();
  try {
    let first: OdsRowRun[] = [];
    while (content.chosen === undefined) {
      const next = await text.next();
      if (next.done) {
        content.end();
        throw choice.refusal(label, content.tables);
      }
      first = content.write(next.value);
    }
    const { name } = content.chosen;
    // The tables up to it are all this reader sees of the file: the sheet is named in messages
    // when tables came before it, or when --sheet named it.
    const count = content.tables.length + (options.sheet === undefined ? 0 : 1);
    const onRow = await positionOf(path, parsed, options.onPosition);
    const context = { name, label, options, hidden: choice.hidden, count, onRow };
    yield* sheetItems(tableRows(first, content, text), (row) => row, context);
  } finally {
    await text.return?.(undefined);
    entry.destroy();
  }
}
