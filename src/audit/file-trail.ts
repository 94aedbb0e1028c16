import { type FileHandle, mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fsyncPath, replaceFileAtomically } from "../catalog/durable-files.js";
import { withFileLock } from "../catalog/file-lock.js";
import { readNumberedLineBatches } from "../catalog/line-reader.js";
import { RunError } from "../errors/run-error.js";
import {
  type AuditDraft,
  type AuditEntry,
  type AuditFilter,
  entryText,
  FIRST_PREV,
  matches,
  sealEntry,
} from "./entry.js";
import type { AuditTrail } from "./trail.js";
import { readEntry, type StoredText, type TrailHead, verifyChain } from "./verify.js";

/**
 * The trail's file under the data dir, one entry a line.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function auditFilePath(dataDir: string): string {
  return join(dataDir, "audit.ndjson");
}

/** Bytes read back at a time when looking for the last line. */
const TAIL_CHUNK = 64 << 10;

/**
 * The audit trail as a file: `DATA_DIR/audit.ndjson`, one entry a line, appended under a lock
 * file and flushed before the append returns; `audit.head` beside it holds the newest entry's
 * number and hash, so that the last lines removed, or the last one changed, are found by verify
 * (docs/architecture/audit.md, "Where it is kept").
 */
export class FileAuditTrail implements AuditTrail {
  readonly place: string;
  private readonly headPath: string;

  constructor(readonly dataDir: string) {
    this.place = auditFilePath(dataDir);
    this.headPath = join(dataDir, "audit.head");
  }

  async append(draft: AuditDraft): Promise<AuditEntry> {
    await mkdir(this.dataDir, { recursive: true });
    return withFileLock(`${this.place}.lock`, "the audit trail's lock", async () => {
      const handle = await open(this.place, "a+", 0o600);
      try {
        const last = await this.newest(handle);
        const entry = sealEntry(draft, (last?.seq ?? 0) + 1, last?.hash ?? FIRST_PREV);
        const bytes = Buffer.from(`${entryText(entry)}\n`, "utf8");
        const { bytesWritten } = await handle.write(bytes, 0, bytes.length);
        if (bytesWritten !== bytes.length)
          throw new RunError(
            `${this.place}: only ${bytesWritten} of ${bytes.length} bytes written`,
          );
        await handle.datasync();
        if (entry.seq === 1) await fsyncPath(this.dataDir);
        await replaceFileAtomically(
          this.headPath,
          `${JSON.stringify({ seq: entry.seq, hash: entry.hash })}\n`,
        );
        return entry;
      } finally {
        await handle.close();
      }
    });
  }

  async list(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    const found: AuditEntry[] = [];
    for await (const { text } of this.lines()) {
      const entry = readEntry(text);
      if (entry && matches(entry, filter)) found.push(entry);
    }
    return found;
  }

  async verify() {
    return verifyChain(this.lines(), await this.head());
  }

  async read(filter: AuditFilter = {}) {
    const entries: AuditEntry[] = [];
    const check = await verifyChain(this.lines(), await this.head(), (entry) => {
      if (matches(entry, filter)) entries.push(entry);
    });
    return { entries, check };
  }

  async close(): Promise<void> {}

  private async *lines(): AsyncGenerator<StoredText> {
    try {
      for await (const { lines, first } of readNumberedLineBatches(this.place))
        for (const [offset, text] of lines.entries())
          yield { place: `line ${first + offset}`, text };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }

  private async head(): Promise<TrailHead | undefined> {
    try {
      return JSON.parse(await readFile(this.headPath, "utf8")) as TrailHead;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new RunError(`${this.headPath} cannot be read: ${(error as Error).message}`);
    }
  }

  /**
   * The newest entry: the file's last line, or the head when the line cannot be read (the head
   * is written after the line, so a crash between leaves the line ahead). A last line without
   * its newline was torn by a crash before its flush returned: it is cut.
   */
  private async newest(handle: FileHandle): Promise<TrailHead | undefined> {
    const line = await lastLine(handle);
    const fromLine = line === undefined ? undefined : readEntry(line);
    const head = await this.head();
    if (fromLine && (!head || fromLine.seq >= head.seq)) return fromLine;
    if (head) return head;
    if (line !== undefined)
      throw new RunError(
        `${this.place}: its last line is not an audit entry and ${this.headPath} is missing; run giftjobs audit verify`,
      );
    return undefined;
  }
}

/** The last whole line of the file (a torn tail cut first), or undefined when it is empty. */
async function lastLine(handle: FileHandle): Promise<string | undefined> {
  const { size } = await handle.stat();
  let end = size;
  let tail = Buffer.alloc(0);
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const chunk = Buffer.alloc(end - start);
    await handle.read(chunk, 0, chunk.length, start);
    tail = Buffer.concat([chunk, tail]);
    end = start;
    const lastNewline = tail.lastIndexOf(0x0a);
    if (lastNewline === -1) continue;
    if (lastNewline !== tail.length - 1) {
      // Torn: what follows the last newline never finished its write.
      await handle.truncate(end + lastNewline + 1);
      await handle.datasync();
      tail = tail.subarray(0, lastNewline + 1);
    }
    // Buffer.lastIndexOf reads a negative offset from the end: a lone newline has no line before.
    const before = tail.length >= 2 ? tail.lastIndexOf(0x0a, tail.length - 2) : -1;
    if (before !== -1 || end === 0)
      return tail.subarray(before + 1, tail.length - 1).toString("utf8");
  }
  if (tail.length > 0) {
    // One torn line and nothing else.
    await handle.truncate(0);
    return undefined;
  }
  return undefined;
}
