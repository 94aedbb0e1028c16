import { once } from "node:events";
import type { Writable } from "node:stream";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";

/**
 * Rows written to PostgreSQL with COPY ... FROM STDIN in its text format: one line per row,
 * columns separated by tabs, `\N` for null (the fastest way in; docs/catalog-database.md,
 * "Tables").
 */

/** A value as a field of COPY's text format: backslash, tab, newline and return escaped. */
export function copyField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "\\N";
  const text = typeof value === "string" ? value : String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, escapeChar) : text;
}

function escapeChar(char: string): string {
  switch (char) {
    case "\\":
      return "\\\\";
    case "\t":
      return "\\t";
    case "\n":
      return "\\n";
    default:
      return "\\r";
  }
}

/**
 * JSON text (JSON.stringify's) as a field: it holds no raw tab, newline or return (JSON escapes
 * them), so only its backslashes are doubled; a plain search finds them faster than a RegExp.
 */
export function copyJson(text: string): string {
  return text.includes("\\") ? text.replaceAll("\\", "\\\\") : text;
}

/** A text[] as COPY's text format reads it: an array literal, each element quoted. */
export function copyTextArray(list: readonly string[] | null | undefined): string {
  if (!list) return "\\N";
  const literal = `{${list.map((item) => `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`;
  return copyField(literal);
}

/** One COPY under way on `client`: write lines, then finish (or it fails with the connection). */
export class CopyWriter {
  private failure: Error | undefined;
  private readonly done: Promise<void>;

  private constructor(private readonly stream: Writable) {
    this.done = new Promise<void>((resolve, reject) => {
      stream.on("finish", () => resolve());
      stream.on("error", (error: Error) => {
        this.failure = error;
        reject(error);
      });
    });
    // Nobody may be awaiting `done` when the stream fails: the failure is kept for write().
    this.done.catch(() => {});
  }

  /** Starts `COPY <target> FROM STDIN` (target: `table (col, ...)`). */
  static start(client: pg.ClientBase, target: string): CopyWriter {
    return new CopyWriter(client.query(copyFrom(`COPY ${target} FROM STDIN`)));
  }

  /** Writes rows (each a line with its newline), waiting when PostgreSQL is behind. */
  async write(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.write(text)) return;
    await Promise.race([once(this.stream, "drain"), this.done]);
    if (this.failure) throw this.failure;
  }

  /** Ends the COPY; resolves when PostgreSQL has taken every row. */
  async finish(): Promise<void> {
    if (this.failure) throw this.failure;
    this.stream.end();
    await this.done;
  }

  /** Gives up the COPY (its transaction is rolled back by the caller). */
  abort(): void {
    if (!this.stream.destroyed) this.stream.destroy(new Error("COPY aborted"));
  }
}
