import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLineBatches } from "../catalog/line-reader.js";
import { UserError } from "../errors/user-error.js";
import type { RepeatOf } from "../ledger/types.js";
import type { OrderRow } from "../orders/order-row.js";

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
 * An OrderRow's fields in the order a spool line holds them; every field, or the type check
 * below fails (a field left out here would be lost between the passes).
 */
const ROW_FIELDS = [
  "line",
  "email",
  "product_code",
  "face_value",
  "template_id",
  "template_source",
  "description",
  "reference",
  "send_at",
  "metadata",
  "distribution",
  "recipient_reference",
  "product_codes",
  "selection_template_id",
  "currency",
  "currency_source",
] as const satisfies readonly (keyof OrderRow)[];
const everyRowField: Exclude<keyof OrderRow, (typeof ROW_FIELDS)[number]> extends never
  ? true
  : false = true;
void everyRowField;

/** The entry's own cells before the row's: identity, payload, currency, face, price, fingerprint, repeat_of. */
const ROW_AT = 7;

/**
 * A spool line: a JSON array of the entry's cells, then its row's fields in ROW_FIELDS order,
 * `null` where absent (trailing ones left out). Pass 1 writes and pass 2 reads one a row, and
 * an array of values is about half the JSON work of the object with its names
 * (docs/benchmarks.md, "Import at the pace of its parts").
 */
type SpoolLine = unknown[];

function spoolLine(entry: SpooledRow): SpoolLine {
  const { row } = entry;
  const line: SpoolLine = [
    entry.identity,
    entry.payload,
    entry.currency,
    entry.face,
    entry.price,
    entry.fingerprint ?? null,
    entry.repeat_of ?? null,
  ];
  let last = ROW_AT - 1;
  for (const [i, field] of ROW_FIELDS.entries()) {
    const value = row[field];
    line.push(value ?? null);
    if (value !== undefined) last = ROW_AT + i;
  }
  line.length = last + 1;
  return line;
}

function spooledRow(line: SpoolLine): SpooledRow {
  const row: Record<string, unknown> = {};
  for (const [i, field] of ROW_FIELDS.entries()) {
    const value = line[ROW_AT + i];
    if (value !== null && value !== undefined) row[field] = value;
  }
  const entry: SpooledRow = {
    kind: "new",
    identity: line[0] as string,
    payload: line[1] as string,
    currency: line[2] as string,
    face: line[3] as string,
    price: line[4] as string,
    row: row as unknown as OrderRow,
  };
  if (line[6] !== null) entry.repeat_of = line[6] as RepeatOf;
  if (line[5] !== null) entry.fingerprint = line[5] as string;
  return entry;
}

/**
 * What pass 1 of an import decided, kept on disk for pass 2 (one JSON line per entry), so that
 * pass 2 records and sends exactly the rows pass 1 checked and priced — a file edited during
 * the import cannot slip an unchecked row in — without parsing and validating the file again.
 *
 * The lines hold e-mail addresses, so the file is private (0600, in a 0700 folder) and, where
 * the system allows it, unlinked as soon as it is open: a crashed import leaves nothing behind.
 */
export class RowSpool {
  private constructor(
    private readonly handle: FileHandle,
    /** The folder still to remove at close, where it could not be removed at once. */
    private readonly leftover: string | undefined,
  ) {}

  /** A new, empty spool in a private folder under `parent` (TMPDIR by default). */
  static async create(parent = tmpdir()): Promise<RowSpool> {
    let dir: string | undefined;
    let handle: FileHandle;
    try {
      dir = await mkdtemp(join(parent, "giftjobs-import-"));
      handle = await open(join(dir, "rows.jsonl"), "w+", 0o600);
    } catch (error) {
      if (dir) await rm(dir, { recursive: true, force: true });
      throw new UserError(
        `cannot create the import's spool file in ${parent} (set TMPDIR to a writable folder with room for about 300 bytes a row): ${(error as Error).message}`,
      );
    }
    try {
      await rm(dir, { recursive: true });
      return new RowSpool(handle, undefined);
    } catch {
      // Windows refuses to delete an open file: the folder goes at close instead.
      return new RowSpool(handle, dir);
    }
  }

  async write(entries: readonly SpoolEntry[]): Promise<void> {
    if (entries.length === 0) return;
    let text = "";
    for (const entry of entries) text += `${JSON.stringify(spoolLine(entry))}\n`;
    await this.handle.write(text);
  }

  /** Every entry written, in order, in batches. */
  async *read(): AsyncGenerator<SpoolEntry[]> {
    for await (const lines of readLineBatches(this.handle))
      yield lines.map((line) => spooledRow(JSON.parse(line) as SpoolLine));
  }

  async close(): Promise<void> {
    await this.handle.close();
    if (this.leftover) await rm(this.leftover, { recursive: true, force: true });
  }
}
