import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { type Stringifier, stringify } from "csv-stringify";
import type { CsvItem } from "./csv-rows.js";
import { fixListCell } from "./fix-list-cell.js";
import { FIX_LIST_COLUMNS, isFixListColumn } from "./header.js";
import type { RowError } from "./row-error.js";

/** A row's problems as one readable cell: "email: ...; face_value: ...". */
export function errorText(errors: readonly RowError[]): string {
  return errors.map((e) => (e.column ? `${e.column}: ${e.message}` : e.message)).join("; ");
}

/**
 * The error file of `--skip-invalid`, a fix list: the file's own header and each invalid row's
 * cells as they were (ignored columns too, same order), then `error` (all the row's problems,
 * `; `-separated) and `line` (where the row was). A cell a spreadsheet would run as a formula
 * is escaped (fixListCell), which the import of a fix list undoes. Fix the cells and import it
 * again with `--append`: the import ignores `error` and `line`. When the file read was itself an error
 * file, its old `error` and `line` columns are left out, so they are not repeated. Written to a
 * temporary file, renamed into place only when the import goes on.
 */
export class InvalidRowsFile {
  private stream: Stringifier | undefined;
  private file: WriteStream | undefined;
  private readonly temporary: string;
  /** Committed or discarded: the temporary file is gone or in place. */
  private settled = false;
  /** The header's cells as read; the indexes of the columns kept from them. */
  private names: string[] = [];
  private kept: number[] = [];

  constructor(readonly path: string) {
    this.temporary = `${path}.tmp-${process.pid}`;
  }

  /** The header of the file being read: told before the first row. */
  setHeader(names: readonly string[]): void {
    this.names = [...names];
    this.kept = this.names.flatMap((name, i) => (isFixListColumn(name) ? [] : [i]));
  }

  async write(item: CsvItem, errors: RowError[]): Promise<void> {
    if (!this.stream) await this.open();
    const cells = this.kept.map((i) => item.cells[i] ?? "");
    // Cells beyond the header (a row with too many fields) are kept, after `line`.
    const extra = item.cells.slice(this.names.length);
    // No cell is a live formula in a spreadsheet; the import reads each back as it was
    // (fix-list-cell.ts), so the file imports as the original did.
    const record = [...cells, errorText(errors), String(item.line), ...extra].map(fixListCell);
    const ok = this.stream!.write(record);
    if (!ok) await new Promise<void>((resolve) => this.stream!.once("drain", () => resolve()));
  }

  private async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    this.stream = stringify();
    this.file = createWriteStream(this.temporary);
    this.stream.pipe(this.file);
    this.stream.write([...this.kept.map((i) => fixListCell(this.names[i]!)), ...FIX_LIST_COLUMNS]);
  }

  private async close(): Promise<void> {
    if (!this.stream || !this.file) return;
    const done = new Promise<void>((resolve, reject) => {
      this.file!.once("finish", () => resolve());
      this.file!.once("error", reject);
    });
    this.stream.end();
    await done;
  }

  /** Puts the file in place when it holds errors. */
  async commit(hasErrors: boolean): Promise<void> {
    this.settled = true;
    await this.close();
    if (hasErrors && this.stream) await rename(this.temporary, this.path);
    else await rm(this.temporary, { force: true });
  }

  /** Removes what was written; nothing once the file was committed. */
  async discard(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.close();
    await rm(this.temporary, { force: true });
  }
}
