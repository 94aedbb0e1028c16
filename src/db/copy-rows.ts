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

/** Whether bytes hold a backslash, tab, newline or return: what copyBytes escapes. */
export function needsCopyEscapes(bytes: Buffer): boolean {
  return SPECIALS.some((byte) => bytes.includes(byte));
}

/** Bytes (UTF-8 text) as a field: the same escapes as copyField. */
export function copyBytes(bytes: Buffer): Buffer {
  if (!needsCopyEscapes(bytes)) return bytes;
  let specials = 0;
  for (const byte of bytes) if (ESCAPES[byte] !== undefined) specials += 1;
  const out = Buffer.allocUnsafe(bytes.length + specials);
  let o = 0;
  for (const byte of bytes) {
    const escaped = ESCAPES[byte];
    if (escaped === undefined) {
      out[o++] = byte;
    } else {
      out[o++] = 0x5c;
      out[o++] = escaped;
    }
  }
  return out;
}

/** Backslash, tab, newline, return; and the letter each is written as after a backslash. */
const SPECIALS = [0x5c, 0x09, 0x0a, 0x0d];
const ESCAPES: Record<number, number> = { 92: 0x5c, 9: 0x74, 10: 0x6e, 13: 0x72 };

/**
 * Lines of COPY text (or any lines) built as one Buffer: each line is text (its fields escaped),
 * then optionally bytes for its last field, then a newline. Cheaper than one string per page
 * when the last field is bytes already (a record's text as received): those are copied, never
 * converted to a string and back; and no string is kept per line.
 */
export class CopyLines {
  private buffer: Buffer;
  private length = 0;

  constructor(sizeHint: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(sizeHint, 1024));
  }

  /** Adds a line: `text`, then `last` (a field's bytes, escaped: copyBytes), then a newline. */
  add(text: string, last?: Buffer): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    this.reserve(text.length * 3 + (last?.length ?? 0) + 1);
    this.length += this.buffer.write(text, this.length);
    if (last) this.length += last.copy(this.buffer, this.length);
    this.buffer[this.length++] = 0x0a;
  }

  /** The lines so far (shares memory with this builder). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(more: number): void {
    if (this.length + more <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + more));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** A text[] as COPY's text format reads it: an array literal, each element quoted. */
export function copyTextArray(list: readonly string[] | null | undefined): string {
  if (!list) return "\\N";
  const literal = `{${list.map((item) => `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`;
  return copyField(literal);
}

/** Bytes of rows a CopyWriter lets wait to be sent before write() waits: about four pages. */
const BACKLOG = 4 << 20;

/** One COPY under way on `client`: write lines, then finish (or it fails with the connection). */
export class CopyWriter {
  private failure: Error | undefined;
  private readonly done: Promise<void>;
  /** Bytes written and not yet handed to the connection. */
  private waiting = 0;
  private caughtUp: (() => void) | undefined;

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

  /**
   * Writes rows (each a line with its newline). Returns at once while less than BACKLOG bytes
   * wait to be sent, so that the caller prepares the next rows while PostgreSQL takes these (a
   * wait for each write to drain made the two take turns); beyond it, waits until PostgreSQL
   * has caught up to BACKLOG.
   */
  async write(rows: string | Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    const size = rows.length;
    this.waiting += size;
    this.stream.write(rows, () => {
      this.waiting -= size;
      if (this.waiting <= BACKLOG) this.caughtUp?.();
    });
    if (this.waiting <= BACKLOG) return;
    await Promise.race([
      new Promise<void>((resolve) => {
        this.caughtUp = resolve;
      }),
      this.done,
    ]);
    this.caughtUp = undefined;
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
