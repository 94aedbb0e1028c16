import type { WriteStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { type Stringifier, stringify } from "csv-stringify";
import type { CatalogIndex } from "../catalog/index-entry.js";
import { UserError } from "../errors/user-error.js";
import { shownMoney } from "../money.js";
import { FIX_LIST_COLUMNS, isFixListColumn, type RenamedColumn } from "./header/header.js";
import type { CsvItem } from "./readers/csv-rows.js";
import { fixListCell } from "./readers/fix-list-cell.js";
import type { RowError } from "./validation/row-error.js";

/** A row's problems as one readable cell: "email: ...; face_value: ...". */
function errorText(errors: readonly RowError[]): string {
  return errors.map((e) => (e.column ? `${e.column}: ${e.message}` : e.message)).join("; ");
}

/**
 * The error file of `--skip-invalid`, a fix list: the file's own header (a `--map`ped column under
 * its field's name) and each invalid row's
 * cells as they were (ignored columns too, same order), then `error` (all the row's problems,
 * `; `-separated) and `line` (where the row was). A cell a spreadsheet would run as a formula
 * is escaped (fixListCell), which the import of a fix list undoes. Fix the cells and import it
 * again with `--append`: the import ignores `error` and `line`. When the file read was itself an error
 * file, its old `error` and `line` columns are left out, so they are not repeated. Written to a
 * temporary file, opened before the first row is read and renamed into place only when the
 * import goes on; a path that cannot be written is a UserError naming it and why.
 */
export class InvalidRowsFile {
  private stream: Stringifier | undefined;
  private file: WriteStream | undefined;
  /** The temporary file's first write error (a full disk): the next write or commit says it. */
  private failure: Error | undefined;
  private readonly temporary: string;
  /** Committed or discarded: the temporary file is gone or in place. */
  private settled = false;
  /** The header's cells as read; the indexes of the columns kept from them. */
  private names: string[] = [];
  private kept: number[] = [];
  /** The columns of face_value, product_code and currency, where the header has them. */
  private money: { face?: number; product?: number; currency?: number } = {};
  private rows = 0;

  /** `catalog` tells a row's currency, so its face value is shown as money (shownFace). */
  constructor(
    readonly path: string,
    private readonly catalog?: CatalogIndex,
  ) {
    this.temporary = `${path}.tmp-${process.pid}`;
  }

  /**
   * Makes the folder and opens the temporary file, before the import reads a row: a path that
   * cannot be written is refused at once, in one line (cannotWrite), not after the file is read.
   */
  async open(): Promise<void> {
    let file: WriteStream;
    try {
      const existing = await stat(this.path).catch(() => undefined);
      if (existing?.isDirectory()) throw Object.assign(new Error("a folder"), { code: "EISDIR" });
      await mkdir(dirname(this.path), { recursive: true });
      file = (await open(this.temporary, "w")).createWriteStream();
    } catch (error) {
      throw this.cannotWrite(error);
    }
    file.on("error", (error) => {
      this.failure ??= error;
    });
    this.file = file;
    this.stream = stringify();
    this.stream.pipe(file);
  }

  /**
   * The header of the file being read: told before the first row. A column `--map` named takes
   * its field's name, so the fix list imports again without the `--map` its file needed (and
   * with it too: a `--map` whose header is absent is not used).
   */
  setHeader(names: readonly string[], renamed: readonly RenamedColumn[] = []): void {
    const mapped = new Map(renamed.filter((r) => r.by === "map").map((r) => [r.source, r.field]));
    this.names = names.map((name) => mapped.get(name.trim()) ?? name);
    this.kept = this.names.flatMap((name, i) => (isFixListColumn(name) ? [] : [i]));
    const synonyms = new Map(renamed.map((r) => [r.source, r.field]));
    const fields = names.map((name) => synonyms.get(name.trim()) ?? name.trim().toLowerCase());
    const at = (field: string) => (fields.includes(field) ? fields.indexOf(field) : undefined);
    this.money = { face: at("face_value"), product: at("product_code"), currency: at("currency") };
  }

  /**
   * The face value cell in its currency's minor units (`25` -> `25.00`), as the report shows it
   * (docs/order-files.md, "Money as money"); as typed when the currency is not known or the
   * cell is no such amount. The identity of a row reads `25` and `25.00` alike.
   */
  private shownFace(cells: string[]): string[] {
    const { face, product, currency } = this.money;
    if (face === undefined || cells[face] === undefined) return cells;
    const own = currency === undefined ? "" : (cells[currency] ?? "").trim();
    const code = product === undefined ? "" : (cells[product] ?? "").trim();
    const known = own || this.catalog?.entries[code]?.currency;
    const shown = shownMoney(cells[face].trim(), known);
    if (shown === cells[face].trim()) return cells;
    const copy = cells.slice();
    copy[face] = shown;
    return copy;
  }

  async write(item: CsvItem, errors: RowError[]): Promise<void> {
    if (!this.stream) await this.open();
    if (this.rows++ === 0)
      await this.writeRecord([...this.kept.map((i) => this.names[i]!), ...FIX_LIST_COLUMNS]);
    const row = this.shownFace(item.cells);
    const cells = this.kept.map((i) => row[i] ?? "");
    // Cells beyond the header (a row with too many fields) are kept, after `line`.
    const extra = item.cells.slice(this.names.length);
    await this.writeRecord([...cells, errorText(errors), String(item.line), ...extra]);
  }

  /**
   * No cell is a live formula in a spreadsheet; the import reads each back as it was
   * (fix-list-cell.ts), so the file imports as the original did.
   */
  private async writeRecord(record: string[]): Promise<void> {
    if (this.failure) throw this.cannotWrite(this.failure);
    if (this.stream!.write(record.map(fixListCell))) return;
    await this.drained();
  }

  /** The stringifier drained, or the file failed (then it never drains). */
  private drained(): Promise<void> {
    const stream = this.stream!;
    const file = this.file!;
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        stream.off("drain", settle);
        file.off("error", settle);
        if (error) reject(this.cannotWrite(error));
        else resolve();
      };
      stream.once("drain", settle);
      file.once("error", settle);
    });
  }

  /** The one line an unwritable error file gets: its path, why, and the flag that moves it. */
  private cannotWrite(error: unknown): UserError {
    return new UserError(
      `cannot write the error file ${this.path}: ${writeProblem(error)} (--error-file names another)`,
    );
  }

  /** Ends the temporary file; its write error, if one came. */
  private async close(): Promise<Error | undefined> {
    const file = this.file;
    if (!this.stream || !file) return undefined;
    if (this.failure || file.closed) {
      file.destroy();
      return this.failure;
    }
    const closed = new Promise<void>((resolve) => file.once("close", () => resolve()));
    this.stream.end();
    await closed;
    return this.failure;
  }

  /** Puts the file in place when it holds errors. */
  async commit(hasErrors: boolean): Promise<void> {
    this.settled = true;
    const failure = await this.close();
    try {
      if (failure) throw failure;
      if (hasErrors && this.rows > 0) await rename(this.temporary, this.path);
      else await rm(this.temporary, { force: true });
    } catch (error) {
      await this.removeTemporary();
      throw this.cannotWrite(error);
    }
  }

  /** Removes what was written; nothing once the file was committed. */
  async discard(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.close();
    await this.removeTemporary();
  }

  private async removeTemporary(): Promise<void> {
    // Whatever stopped the file is the error to tell, not what is left of it.
    await rm(this.temporary, { force: true }).catch(() => {});
  }
}

/** Why a file cannot be written, in words (the error's own message names a temporary path). */
function writeProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ENOTDIR":
    case "EEXIST":
      return "a part of its path is a file, not a folder";
    case "EISDIR":
      return "it is a folder";
    case "ENOENT":
      return "its folder cannot be made";
    case "EROFS":
      return "the file system is read-only";
    case "ENOSPC":
    case "EDQUOT":
      return "no space left on the device";
  }
  return ((error as Error).message ?? String(error)).split("\n")[0]!;
}
