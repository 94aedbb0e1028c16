import { extname } from "node:path";
import { inflateRawSync } from "node:zlib";
import { UserError } from "../../errors/user-error.js";
import { type CsvItem, type ReadOrderRowsOptions, readOrderRowBatches } from "./csv-rows.js";
import { openOrderInput } from "./order-input.js";

/** How an order file is read: an .xlsx workbook, an .ods spreadsheet, or text with a delimiter. */
type OrderFileKind =
  | { type: "xlsx" }
  | { type: "ods" }
  | { type: "text"; delimiter: string; encoding?: "utf-16le" | "utf-16be" };

export interface ReadOrderFileOptions extends ReadOrderRowsOptions {
  /** The sheet of a workbook to read. @defaultValue its first visible sheet */
  sheet?: string;
  /** The most a workbook may unpack to (see readXlsxRows); a text file has no limit. */
  maxUnzippedBytes?: number;
}

/** An OpenDocument file's first entry is its `mimetype`, whose text says which kind it is. */
const ODF_MIMETYPE = "application/vnd.oasis.opendocument.";

/**
 * The text of a zip's first entry when it is named `mimetype` (stored, as the format asks, or
 * deflated, as some writers do), from its local header; undefined for any other zip.
 */
function odfMimetype(sample: Buffer): string | undefined {
  if (sample.length < 30) return undefined;
  const method = sample.readUInt16LE(8);
  const packed = sample.readUInt32LE(18);
  const nameLength = sample.readUInt16LE(26);
  const start = 30 + nameLength + sample.readUInt16LE(28);
  if (sample.toString("latin1", 30, 30 + nameLength) !== "mimetype") return undefined;
  const data = sample.subarray(start, start + Math.min(packed, 200));
  if (method === 0) return data.toString("latin1");
  try {
    return method === 8 ? inflateRawSync(data).toString("latin1") : "";
  } catch {
    return "";
  }
}

/**
 * Which workbook a zip is: .ods when its `mimetype` entry says OpenDocument spreadsheet (or it
 * is named .ods and has none), else .xlsx. Another OpenDocument file (a text) is refused.
 */
function zipKind(ext: string, sample: Buffer, label: string): OrderFileKind {
  const mimetype = odfMimetype(sample);
  if (mimetype === undefined) return ext === ".ods" ? { type: "ods" } : { type: "xlsx" };
  if (mimetype.startsWith(`${ODF_MIMETYPE}spreadsheet`)) return { type: "ods" };
  const kind = mimetype.startsWith(ODF_MIMETYPE)
    ? mimetype.slice(ODF_MIMETYPE.length).split(/[^a-z-]/)[0]
    : JSON.stringify(mimetype.slice(0, 40));
  throw new UserError(
    `${label} is an OpenDocument file but not a spreadsheet (${kind}): save it as .ods, .xlsx or CSV`,
  );
}

const WORKBOOK_EXTENSIONS = new Set([".xlsx", ".xlsm", ".ods"]);

function startsWith(bytes: Buffer, magic: readonly number[]): boolean {
  return magic.every((byte, i) => bytes[i] === byte);
}

/** The first non-blank line of a text, BOM left out. */
function firstLine(text: string): string {
  return (
    text
      .replace(/^\ufeff/, "")
      .split(/\r\n|\r|\n/)
      .find((line) => line.trim() !== "") ?? ""
  );
}

/**
 * UTF-16 by its BOM, as Excel's "Unicode Text" saves (tab-separated; docs/order-files.md,
 * "Spreadsheets as exported"); undefined for any other text.
 */
function utf16Of(sample: Buffer): "utf-16le" | "utf-16be" | undefined {
  if (startsWith(sample, [0xff, 0xfe])) return "utf-16le";
  if (startsWith(sample, [0xfe, 0xff])) return "utf-16be";
  return undefined;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

/**
 * What the file is, by its content first and its name second: a zip (`PK\x03\x04`) is an .ods
 * spreadsheet when its `mimetype` entry says so, else an .xlsx workbook, whatever its name; an
 * empty file named as a workbook is called empty; an old .xls workbook and other binary files are refused; UTF-16
 * text with a BOM is read (decoded). Text is tab-separated when its first line holds more tabs than commas (or, with
 * neither, when it is named .tsv), else comma-separated; an explicit `delimiter` wins. A file
 * named .xlsx that is text is read as text when its first line holds a comma or a tab (or the
 * given delimiter): a CSV export given the wrong name; otherwise it is refused.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function orderFileKind(
  path: string,
  sample: Buffer,
  options: { delimiter?: string; label?: string } = {},
): OrderFileKind {
  const label = options.label ?? path;
  const ext = extname(path).toLowerCase();
  if (
    startsWith(sample, [0x50, 0x4b, 0x03, 0x04]) ||
    startsWith(sample, [0x50, 0x4b, 0x05, 0x06])
  ) {
    const kind = zipKind(ext, sample, label);
    if (options.delimiter !== undefined)
      throw new UserError(`${label} is an .${kind.type} workbook: --delimiter is for CSV files`);
    return kind;
  }
  if (startsWith(sample, [0xd0, 0xcf, 0x11, 0xe0]))
    throw new UserError(
      `${label} is not an .xlsx, .ods or CSV file (an old .xls workbook?): save it as .xlsx or CSV`,
    );
  if (sample.length === 0 && WORKBOOK_EXTENSIONS.has(ext))
    throw new UserError(`${label} is empty (0 bytes): there is no workbook in it`);
  const encoding = utf16Of(sample);
  // The sample may end inside a character: TextDecoder replaces it, the first line is whole.
  const text = encoding ? new TextDecoder(encoding).decode(sample) : sample.toString("utf8");
  // Binary data: a NUL byte in UTF-8 text; a NUL character in UTF-16 text (its bytes hold many).
  const binary = encoding ? text.includes("\0") : sample.includes(0);
  const line = firstLine(text);
  const tabs = count(line, "\t");
  const commas = count(line, ",");
  const separated =
    options.delimiter !== undefined ? line.includes(options.delimiter) : tabs + commas > 0;
  if (WORKBOOK_EXTENSIONS.has(ext) && (binary || !separated))
    throw new UserError(
      `${label} is not a spreadsheet: an ${ext} file is a zip archive and this one is not (a renamed file?)`,
    );
  if (binary)
    throw new UserError(`${label} is not a text, .xlsx or .ods file: it holds binary data`);
  const kind = encoding ? { type: "text" as const, encoding } : { type: "text" as const };
  if (options.delimiter !== undefined) return { ...kind, delimiter: options.delimiter };
  if (tabs > commas || (tabs === 0 && commas === 0 && ext === ".tsv"))
    return { ...kind, delimiter: "\t" };
  return { ...kind, delimiter: "," };
}

/**
 * Reads an order file of any kind orderFileKind recognises (.csv, .tsv, .txt, .xlsx, .ods) as
 * the same items, in batches (never empty; see readKind): the import does not care which it
 * was. A file refused by its first bytes is read no further, a pipe or a device included
 * (order-input.ts).
 */
export async function* readOrderFileBatches(
  path: string,
  options: ReadOrderFileOptions = {},
): AsyncGenerator<CsvItem[]> {
  const label = options.label ?? path;
  const input = await openOrderInput(path, label);
  try {
    const kind = orderFileKind(path, input.sample, options);
    if (kind.type === "text" && options.sheet !== undefined)
      throw new UserError(`--sheet is for .xlsx and .ods workbooks; ${label} is a text file`);
    yield* readKind(await input.keep(), kind, { ...options, label });
  } finally {
    await input.dispose();
  }
}

/**
 * The rows of a file whose kind is known, in batches: a text file's as its parser gives them
 * (one promise a batch, not a row: readOrderRowBatches), a workbook's as its reader yields them,
 * gathered.
 */
async function* readKind(
  path: string,
  kind: OrderFileKind,
  options: ReadOrderFileOptions,
): AsyncGenerator<CsvItem[]> {
  const { sheet, delimiter: _, maxUnzippedBytes, ...rest } = options;
  if (kind.type === "xlsx") {
    // Loaded here: exceljs only for a workbook (docs/architecture/command-line.md, "Start-up").
    const { readXlsxRows } = await import("./xlsx-rows.js");
    yield* regathered(readXlsxRows(path, { ...rest, sheet, maxUnzippedBytes }));
    return;
  }
  if (kind.type === "ods") {
    const { readOdsRows } = await import("./ods-rows.js");
    yield* gathered(readOdsRows(path, { ...rest, sheet, maxUnzippedBytes }));
    return;
  }
  yield* readOrderRowBatches(path, {
    ...rest,
    delimiter: kind.delimiter,
    encoding: kind.encoding,
  });
}

/** Items a workbook's reader yields, WORKBOOK_BATCH at a time (the last batch shorter). */
async function* gathered(items: AsyncIterable<CsvItem>): AsyncGenerator<CsvItem[]> {
  let batch: CsvItem[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length < WORKBOOK_BATCH) continue;
    yield batch;
    batch = [];
  }
  if (batch.length > 0) yield batch;
}

/** A workbook reader's batches (one a chunk of its XML) joined up to WORKBOOK_BATCH items. */
async function* regathered(batches: AsyncIterable<CsvItem[]>): AsyncGenerator<CsvItem[]> {
  let batch: CsvItem[] = [];
  for await (const items of batches) {
    for (const item of items) {
      batch.push(item);
      if (batch.length < WORKBOOK_BATCH) continue;
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** A workbook's rows a batch: as many as the CSV parser gives at most. */
const WORKBOOK_BATCH = 2000;
