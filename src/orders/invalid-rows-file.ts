import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { type Stringifier, stringify } from "csv-stringify";
import { neutralise } from "./campaign-report.js";
import type { CsvItem } from "./csv-rows.js";
import type { RowError } from "./row-error.js";

/**
 * The error file of `--skip-invalid`: one line per problem (line, column, message) with the
 * row's cells as JSON so nothing of the row is lost. Written to a temporary file, renamed
 * into place only when the import goes on.
 */
export class InvalidRowsFile {
  private stream: Stringifier | undefined;
  private file: WriteStream | undefined;
  private readonly temporary: string;

  constructor(readonly path: string) {
    this.temporary = `${path}.tmp-${process.pid}`;
  }

  async write(item: CsvItem, errors: RowError[]): Promise<void> {
    if (!this.stream) await this.open();
    const cells =
      item.kind === "row"
        ? JSON.stringify(item.ignored ? { ...item.fields, ...item.ignored } : item.fields)
        : "";
    for (const error of errors) {
      const ok = this.stream!.write(
        [String(error.line), error.column, error.message, cells].map(neutralise),
      );
      if (!ok) await new Promise<void>((resolve) => this.stream!.once("drain", () => resolve()));
    }
  }

  private async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    this.stream = stringify({ header: true, columns: ["line", "column", "message", "row"] });
    this.file = createWriteStream(this.temporary);
    this.stream.pipe(this.file);
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
    await this.close();
    if (hasErrors && this.stream) await rename(this.temporary, this.path);
    else await rm(this.temporary, { force: true });
  }

  async discard(): Promise<void> {
    await this.close();
    await rm(this.temporary, { force: true });
  }
}
