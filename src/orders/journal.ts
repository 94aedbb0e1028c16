import { constants } from "node:fs";
import { type FileHandle, mkdir, open, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fsyncPath } from "../catalog/durable-files.js";

/**
 * `$GIFTJOBS_DATA_DIR/campaigns/NAME/orders.ndjson`: the campaign's order journal
 * (docs/architecture/keys-and-exactly-once.md, "Lost ledger"). It sits beside the campaign's
 * `archive/` folder, which an archive writes and a restore reads; neither touches the journal.
 */
export function journalPath(dataDir: string, campaign: string): string {
  return join(dataDir, "campaigns", campaign, "orders.ndjson");
}

/**
 * One line of the journal: an order as an import recorded it, or rows moved to a new generation
 * (a worker after the service's answer, `orders retry --new-key`), by what makes its key.
 * Identities are hashes (no e-mail, no reference in clear); `k` is orderKey(campaign, g, i),
 * kept so a reader can tell a line of another campaign or a damaged one.
 */
export interface JournalLine {
  /** The generation at import, or the one the rows moved to. */
  g: number;
  /** The X-Idempotency-Key. */
  k: string;
  /** The rows' identities, sorted (the body's item order). */
  i: string[];
  /**
   * Fingerprint of the API key of the process that wrote the line (ApiClient.keyFingerprint),
   * the key its order is expected to be sent with; absent in lines written before it existed.
   */
  a?: string;
  /**
   * A void line: the generation change of the same `g`, `k` and `i` written before it is taken
   * back, its REKEY refused (the ledger never held the key, so nothing sent it): readers take
   * one such earlier line as never written (docs/architecture/keys-and-exactly-once.md,
   * "One key while an order may exist"). Written `{"g", "k", "i", "void": true}`.
   */
  void?: true;
}

/** The void line that takes back the generation change `line` (see JournalLine.void). */
export function voidLine(line: JournalLine): JournalLine {
  return { g: line.g, k: line.k, i: line.i, void: true };
}

/**
 * Appends `lines` to the journal at `path` and flushes them, then closes it: a generation change
 * is journaled before its new key can be sent (docs/architecture/keys-and-exactly-once.md, "One key
 * while an order may exist"). Rare (a 4xx moved rows), so a file opened per call costs nothing that
 * matters.
 */
export async function appendJournalLines(
  path: string,
  lines: readonly JournalLine[],
): Promise<void> {
  const writer = new OrderJournalWriter(path);
  try {
    await writer.append(lines);
  } finally {
    await writer.close();
  }
}

/** Bytes read back at a time when looking for the end of the last whole line. */
const TAIL_CHUNK = 64 << 10;

/**
 * How a writer opens its file: to append, and where the system has the flag (Linux, macOS) with
 * O_DSYNC, so that a write returns once its bytes are on disk: an append is one trip through
 * libuv's thread pool, not two (a write, then a datasync). During an import each trip's answer
 * waits for the main thread to finish preparing the next batch, so two trips took about two
 * preparations (docs/architecture/import.md, "Pass 2 in step"). Elsewhere ("a+"), each append
 * is followed by a datasync.
 */
const APPEND_DSYNC =
  constants.O_DSYNC === undefined
    ? undefined
    : constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;

/**
 * Appends an import's orders to the campaign's journal, each batch flushed to disk before the
 * RECORD script writes it to Redis: an order the ledger holds is always in the journal. The file
 * is opened (and its folders made and flushed) at the first append, so an import that records
 * nothing, and a dry run, write nothing.
 */
export class OrderJournalWriter {
  private handle: FileHandle | undefined;

  constructor(readonly path: string) {}

  /** Appends the lines in one write (O_APPEND: whole lines, after any other writer's) and flushes. */
  async append(lines: readonly JournalLine[]): Promise<void> {
    if (lines.length === 0) return;
    let text = "";
    for (const { g, k, i, a, void: taken } of lines)
      text += `${JSON.stringify(taken ? { g, k, i, void: true } : a ? { g, k, i, a } : { g, k, i })}\n`;
    await this.appendText(text);
  }

  /**
   * Appends whole lines (`text` ends with a newline) in one write and flushes them. The paid
   * memory's files (paid-memory.ts) are written this way too, with the same care for torn lines.
   */
  async appendText(text: string): Promise<void> {
    const handle = this.handle ?? (await this.open());
    const bytes = Buffer.from(text, "utf8");
    const { bytesWritten } = await handle.write(bytes, 0, bytes.length);
    // A short write (a full disk) leaves a torn line: it is cut at the next open, and RECORD
    // never runs for it, since this throws first.
    if (bytesWritten !== bytes.length)
      throw new Error(`${this.path}: only ${bytesWritten} of ${bytes.length} bytes written`);
    // Opened with O_DSYNC, the write above was durable when it returned.
    if (APPEND_DSYNC === undefined) await handle.datasync();
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }

  /**
   * Closes the file when `path` names another file now, or none: a prune of the paid memory
   * replaced or removed it (src/orders/paid-files.ts), and an append to the old one would be
   * lost. The next append opens the file there. The caller holds the lock such a prune takes.
   */
  async closeIfReplaced(): Promise<void> {
    if (!this.handle) return;
    const held = await this.handle.stat();
    const named = await stat(this.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (named && named.ino === held.ino && named.dev === held.dev) return;
    await this.close();
  }

  private async open(): Promise<FileHandle> {
    const dir = dirname(this.path);
    await mkdir(dir, { recursive: true });
    const handle = await open(this.path, APPEND_DSYNC ?? "a+", 0o600);
    try {
      await cutTornTail(handle);
      // The new file's entry, and the folders mkdir may have made, must survive a power cut too.
      await fsyncPath(dir);
      await fsyncPath(dirname(dir));
      await fsyncPath(dirname(dirname(dir)));
    } catch (error) {
      await handle.close();
      throw error;
    }
    this.handle = handle;
    return handle;
  }
}

/**
 * A journal whose last line has no newline was cut by a crash during its write, before the
 * flush that comes before RECORD returned: that batch was never recorded, so the torn line
 * goes, and the next lines start on a line of their own.
 */
async function cutTornTail(handle: FileHandle): Promise<void> {
  const { size } = await handle.stat();
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const chunk = Buffer.alloc(end - start);
    await handle.read(chunk, 0, chunk.length, start);
    const newline = chunk.lastIndexOf(0x0a);
    if (newline !== -1) {
      end = start + newline + 1;
      break;
    }
    end = start;
  }
  if (end === size) return;
  await handle.truncate(end);
  await handle.sync();
}
