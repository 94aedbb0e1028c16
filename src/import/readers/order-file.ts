import { open } from "node:fs/promises";
import { extname } from "node:path";
import { UserError } from "../../errors/user-error.js";
import { type CsvItem, type ReadOrderRowsOptions, readOrderRows } from "./csv-rows.js";

/** How an order file is read: an .xlsx workbook, or text with a delimiter. */
export type OrderFileKind =
  | { type: "xlsx" }
  | { type: "text"; delimiter: string; encoding?: "utf-16le" | "utf-16be" };

export interface ReadOrderFileOptions extends ReadOrderRowsOptions {
  /** The sheet of an .xlsx workbook to read. @defaultValue its first sheet */
  sheet?: string;
  /** The most an .xlsx workbook may unpack to (see readXlsxRows); a text file has no limit. */
  maxUnzippedBytes?: number;
}

const SAMPLE_BYTES = 64 * 1024;

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
 * What the file is, by its content first and its name second: a zip (`PK\x03\x04`) is an .xlsx
 * workbook whatever its name; an old .xls workbook and other binary files are refused; UTF-16
 * text with a BOM is read (decoded). Text is tab-separated when its first line holds more tabs than commas (or, with
 * neither, when it is named .tsv), else comma-separated; an explicit `delimiter` wins. A file
 * named .xlsx that is text is read as text when its first line holds a comma or a tab (or the
 * given delimiter): a CSV export given the wrong name; otherwise it is refused.
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
    if (options.delimiter !== undefined)
      throw new UserError(`${label} is an .xlsx workbook: --delimiter is for CSV files`);
    return { type: "xlsx" };
  }
  if (startsWith(sample, [0xd0, 0xcf, 0x11, 0xe0]))
    throw new UserError(
      `${label} is not an .xlsx or CSV file (an old .xls workbook?): save it as .xlsx or CSV`,
    );
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
  if ((ext === ".xlsx" || ext === ".xlsm") && (binary || !separated))
    throw new UserError(
      `${label} is not a spreadsheet: an .xlsx file is a zip archive and this one is not (a renamed file?)`,
    );
  if (binary) throw new UserError(`${label} is not a text or .xlsx file: it holds binary data`);
  const kind = encoding ? { type: "text" as const, encoding } : { type: "text" as const };
  if (options.delimiter !== undefined) return { ...kind, delimiter: options.delimiter };
  if (tabs > commas || (tabs === 0 && commas === 0 && ext === ".tsv"))
    return { ...kind, delimiter: "\t" };
  return { ...kind, delimiter: "," };
}

async function readSample(path: string, label: string): Promise<Buffer> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EACCES" || code === "EISDIR")
      throw new UserError(`cannot read ${label}: ${(error as Error).message}`);
    throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * Reads an order file of any kind orderFileKind recognises (.csv, .tsv, .txt, .xlsx) as the
 * same items: the import does not care which it was.
 */
export async function* readOrderFile(
  path: string,
  options: ReadOrderFileOptions = {},
): AsyncGenerator<CsvItem> {
  const label = options.label ?? path;
  const kind = orderFileKind(path, await readSample(path, label), options);
  const { sheet, delimiter: _, maxUnzippedBytes, ...rest } = options;
  if (kind.type === "xlsx") {
    // Loaded here: exceljs only for a workbook (docs/architecture/command-line.md, "Start-up").
    const { readXlsxRows } = await import("./xlsx-rows.js");
    yield* readXlsxRows(path, { ...rest, sheet, maxUnzippedBytes });
    return;
  }
  if (sheet !== undefined)
    throw new UserError(`--sheet is for .xlsx workbooks; ${label} is a text file`);
  yield* readOrderRows(path, { ...rest, delimiter: kind.delimiter, encoding: kind.encoding });
}
