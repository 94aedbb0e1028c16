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
    for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
    await this.handle.write(text);
  }

  /** Every entry written, in order, in batches. */
  async *read(): AsyncGenerator<SpoolEntry[]> {
    for await (const lines of readLineBatches(this.handle))
      yield lines.map((line) => JSON.parse(line) as SpoolEntry);
  }

  async close(): Promise<void> {
    await this.handle.close();
    if (this.leftover) await rm(this.leftover, { recursive: true, force: true });
  }
}
