import { readLineBatches } from "../catalog/line-reader.js";
import { CAMPAIGN_NAME } from "../ledger/ledger.js";
import type { RepeatOf } from "../ledger/types.js";
import type { OrderRow } from "../orders/order-row.js";
import { openPrivateTempFile, type PrivateTempFile } from "../private-temp-file.js";

/** A new row as pass 1 checked it: what pass 2 records and sends. */
export interface SpooledRow {
  kind: "new";
  identity: string;
  payload: string;
  currency: string;
  /** The row's face value and price in the currency's minor units (strings: exact). */
  face: string;
  price: string;
  row: OrderRow;
  /** --allow-repeats: the rows of other campaigns it pays again (see repeatOf); else absent. */
  repeat_of?: RepeatOf;
  /** Its paid fingerprint, when pass 1 hashed it for the repeats check; else absent. */
  fingerprint?: string;
}

export type SpoolEntry = SpooledRow;

/**
 * What pass 1 of an import decided, kept on disk for pass 2 (one line per entry), so that
 * pass 2 records and sends exactly the rows pass 1 checked and priced — a file edited during
 * the import cannot slip an unchecked row in — without parsing and validating the file again.
 *
 * The lines hold e-mail addresses, so the file is private (0600, in a 0700 folder) and, where
 * the system allows it, unlinked as soon as it is open: a crashed import leaves nothing behind.
 */
export class RowSpool {
  private constructor(private readonly file: PrivateTempFile) {}

  /** A new, empty spool in a private folder under `parent` (TMPDIR by default). */
  static async create(parent?: string): Promise<RowSpool> {
    return new RowSpool(
      await openPrivateTempFile("the import's spool file", "about 300 bytes a row", parent),
    );
  }

  async write(entries: readonly SpoolEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // Pieces of at most CHUNK_CHARS, not the batch as one string: a string over 128 KB is
    // allocated in V8's large-object space, and 500 rows repeating earlier rows, with the rows
    // they repeat, came to about 140 KB (docs/architecture/import.md, "Strings of a batch").
    let text = "";
    for (const entry of entries) {
      text += `${encodeEntry(entry)}\n`;
      if (text.length < CHUNK_CHARS) continue;
      await this.file.handle.write(text);
      text = "";
    }
    if (text !== "") await this.file.handle.write(text);
  }

  /** Every entry written, in order, in batches. */
  async *read(): AsyncGenerator<SpoolEntry[]> {
    for await (const lines of readLineBatches(this.file.handle)) {
      const entries: SpoolEntry[] = new Array(lines.length);
      for (let i = 0; i < lines.length; i++) entries[i] = decodeEntry(lines[i]!);
      yield entries;
    }
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/**
 * An entry's line: its cells in a fixed order, separated by tabs, the entry's own and then its
 * row's (SPOOL_CELLS). Not JSON: in CPU profiles of the 1,000,000-row import bench, making,
 * writing, reading and parsing the spool's lines took 3.8 s as JSON arrays and 2.0 s as these,
 * which are a third shorter (318 bytes a line of the bench's, 214).
 *
 * A cell is empty when its field is absent. A text is written as it is, but for `\`, a tab, a
 * line feed and a carriage return, written `\\`, `\t`, `\n`, `\r`, and the empty text, written
 * `\e`; a number in decimal; an object (metadata, product codes, repeats) as its JSON, escaped as
 * a text. A row's texts come from decoded files, so hold no lone surrogate, which UTF-8 could
 * not keep. A line with another number of cells was not written by this spool: it throws.
 */
const SPOOL_CELLS = 23;

/** Characters of a piece the spool writes at once: under 128 KB even at two bytes a character. */
const CHUNK_CHARS = 32_768;

const EMPTY = "\\e";
const UNSAFE = /[\t\n\r\\]/;
const UNSAFE_ALL = /[\t\n\r\\]/g;
const ESCAPED_ALL = /\\(.)/g;
const BACKSLASHES = /\\/g;

function escapeChar(c: string): string {
  return c === "\t" ? "\\t" : c === "\n" ? "\\n" : c === "\r" ? "\\r" : "\\\\";
}

function unescapeChar(_: string, c: string): string {
  return c === "t" ? "\t" : c === "n" ? "\n" : c === "r" ? "\r" : c;
}

function text(value: string | undefined): string {
  if (value === undefined) return "";
  if (value === "") return EMPTY;
  return UNSAFE.test(value) ? value.replace(UNSAFE_ALL, escapeChar) : value;
}

/** JSON writes a tab or a line break as `\\t`, `\\n`: of the escapes, it needs only `\\`'s. */
function json(value: unknown): string {
  if (value === undefined) return "";
  const encoded = JSON.stringify(value);
  return encoded.includes("\\") ? encoded.replace(BACKSLASHES, "\\\\") : encoded;
}

function readText(cell: string): string | undefined {
  if (cell === "") return undefined;
  if (!cell.includes("\\")) return cell;
  return cell === EMPTY ? "" : cell.replace(ESCAPED_ALL, unescapeChar);
}

/** A cell that is never empty: what encodeEntry writes of a field an entry always has. */
function readRequired(cell: string): string {
  return readText(cell) ?? "";
}

function readJson<T>(cell: string): T | undefined {
  const value = readText(cell);
  return value === undefined ? undefined : (JSON.parse(value) as T);
}

/**
 * The rows a row repeats (--allow-repeats), each `campaign:line`, separated by commas, then
 * `+more` when there are more: `gifts:12,q3:4+3`. A repeat of a million rows writes and reads one
 * a row, and as JSON that took 2.5 s of its CPU (profile of the import bench). A name as
 * CAMPAIGN_NAME allows holds none of `:`, `,` or `+`; any other (only a paid memory from
 * elsewhere could hold one) is written as JSON, which begins with `{`, as no such name does.
 */
function repeatOfCell(repeatOf: RepeatOf | undefined): string {
  if (repeatOf === undefined) return "";
  if (repeatOf.rows.length === 0) return json(repeatOf);
  let cell = "";
  for (const { campaign, line } of repeatOf.rows) {
    if (!CAMPAIGN_NAME.test(campaign)) return json(repeatOf);
    cell += `${cell === "" ? "" : ","}${campaign}:${line}`;
  }
  return repeatOf.more === undefined ? cell : `${cell}+${repeatOf.more}`;
}

function readRepeatOf(cell: string): RepeatOf | undefined {
  if (cell === "" || cell.startsWith("{")) return readJson<RepeatOf>(cell);
  const more = cell.indexOf("+");
  const rows = (more === -1 ? cell : cell.slice(0, more)).split(",").map((pair) => {
    const colon = pair.lastIndexOf(":");
    return { campaign: pair.slice(0, colon), line: Number(pair.slice(colon + 1)) };
  });
  return more === -1 ? { rows } : { rows, more: Number(cell.slice(more + 1)) };
}

/** One string, not an array joined: an import writes a million. */
function encodeEntry(e: SpoolEntry): string {
  const r = e.row;
  const metadata = Object.keys(r.metadata).length > 0 ? json(r.metadata) : "";
  return `${text(e.identity)}\t${text(e.payload)}\t${text(e.currency)}\t${text(e.face)}\t${text(e.price)}\t${repeatOfCell(e.repeat_of)}\t${text(e.fingerprint)}\t${r.line}\t${text(r.email)}\t${text(r.product_code)}\t${text(r.face_value)}\t${text(r.template_id)}\t${r.template_source}\t${text(r.description)}\t${text(r.reference)}\t${r.send_at ?? ""}\t${metadata}\t${text(r.distribution)}\t${text(r.recipient_reference)}\t${json(r.product_codes)}\t${text(r.selection_template_id)}\t${text(r.currency)}\t${text(r.currency_source)}`;
}

function decodeEntry(line: string): SpoolEntry {
  const c = line.split("\t");
  if (c.length !== SPOOL_CELLS)
    throw new Error(`the import's spool holds a line of ${c.length} cells, not ${SPOOL_CELLS}`);
  const row: OrderRow = {
    line: Number(c[7]),
    email: readRequired(c[8]!),
    product_code: readRequired(c[9]!),
    face_value: readRequired(c[10]!),
    template_source: c[12] as OrderRow["template_source"],
    metadata: readJson<Record<string, string>>(c[16]!) ?? {},
  };
  // Each only when present, as validation makes a row.
  put(row, "template_id", readText(c[11]!));
  put(row, "description", readText(c[13]!));
  put(row, "reference", readText(c[14]!));
  if (c[15] !== "") row.send_at = Number(c[15]);
  put(row, "distribution", readText(c[17]!) as OrderRow["distribution"]);
  put(row, "recipient_reference", readText(c[18]!));
  put(row, "product_codes", readJson<string[]>(c[19]!));
  put(row, "selection_template_id", readText(c[20]!));
  put(row, "currency", readText(c[21]!));
  put(row, "currency_source", readText(c[22]!) as OrderRow["currency_source"]);
  const entry: SpoolEntry = {
    kind: "new",
    identity: readRequired(c[0]!),
    payload: readRequired(c[1]!),
    currency: readRequired(c[2]!),
    face: readRequired(c[3]!),
    price: readRequired(c[4]!),
    row,
  };
  put(entry, "repeat_of", readRepeatOf(c[5]!));
  put(entry, "fingerprint", readText(c[6]!));
  return entry;
}

/** Sets an optional field only when it has a value: an absent one stays absent, not undefined. */
function put<T, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}
