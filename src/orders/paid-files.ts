import type { Stats } from "node:fs";
import { type FileHandle, open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { parseFileJson } from "../catalog/damaged-file-error.js";
import { fsyncPath } from "../catalog/durable-files.js";
import { readNumberedLineBatches } from "../catalog/line-reader.js";
import { RunError } from "../errors/run-error.js";

/** A whole line of a paid memory file: its text (without the newline) and number (from 1). */
export interface MemoryLine {
  text: string;
  number: number;
}

/** What every line of `paid.ndjson` and `imports.ndjson` has: when it was recorded (ms). */
export interface Dated {
  t: number;
}

/**
 * The whole lines of a paid memory file (docs/architecture/repeats.md), none when it does not
 * exist. A last line without its newline was torn by a crash before its flush returned (its
 * batch was never recorded): skipped. Read from one handle up to the size it had when opened, so
 * a prune replacing or removing the file meanwhile, or an append after it, changes nothing read.
 */
export async function* memoryLines(path: string): AsyncGenerator<MemoryLine> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    const terminated = last[0] === 0x0a;
    // One line behind: the last one is dropped when the file does not end with a newline.
    let held: MemoryLine | undefined;
    for await (const { lines, first } of readNumberedLineBatches(handle, { end: size })) {
      for (const [offset, text] of lines.entries()) {
        if (held) yield held;
        held = { text, number: first + offset };
      }
    }
    if (held && terminated) yield held;
  } finally {
    await handle.close();
  }
}

/** A file's lines recorded before a time: how many, the entries they hold, and the lines kept. */
export interface Tally {
  old: number;
  entries: number;
  kept: number;
}

/** Counts the lines of `path` recorded before `before` (ms) and what they hold (`weigh`). */
export async function tallyBefore<T extends Dated>(
  path: string,
  before: number,
  weigh: (line: T) => number,
): Promise<Tally> {
  const tally: Tally = { old: 0, entries: 0, kept: 0 };
  for await (const { text, number } of memoryLines(path)) {
    const line = parseFileJson<T>(text, path, number);
    if (line.t < before) {
      tally.old++;
      tally.entries += weigh(line);
    } else tally.kept++;
  }
  return tally;
}

/** Text written to the new file at a time (one write per this much). */
const CHUNK = 1 << 20;

/**
 * Keeps only the lines of `path` recorded at `before` or later; returns what the lines removed
 * held (`weigh`). The caller holds the campaign's lock, so nothing appends meanwhile. Nothing old:
 * left alone. Nothing kept: removed. Otherwise written whole to `path.tmp`, flushed, renamed over
 * `path` and the folder flushed, so a crash leaves the old file or the new, never half of one; a
 * torn last line is not carried over, as no reader counts it.
 */
export async function pruneFile<T extends Dated>(
  path: string,
  before: number,
  weigh: (line: T) => number,
): Promise<number> {
  const start = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  const tally = await tallyBefore(path, before, weigh);
  if (start === undefined || tally.old === 0) return 0;
  if (tally.kept === 0) {
    await unchangedSince(path, start);
    await rm(path, { force: true });
  } else await rewrite(path, before, start);
  await fsyncPath(dirname(path));
  return tally.entries;
}

/**
 * The lock file is taken over from another host's holder after a minute (src/catalog/file-lock.ts):
 * a prune that took that long checks that no append came meanwhile before replacing the file,
 * and fails (the job is retried) rather than lose it.
 */
async function unchangedSince(path: string, start: Stats): Promise<void> {
  const now = await stat(path);
  if (now.ino !== start.ino || now.size !== start.size || now.mtimeMs !== start.mtimeMs)
    throw new RunError(
      `${path} changed while it was pruned (its lock taken over?): left as it was; the next run prunes it`,
    );
}

/** Writes the lines recorded at `before` or later to `path.tmp`, and renames it over `path`. */
async function rewrite(path: string, before: number, start: Stats): Promise<void> {
  const tmp = `${path}.tmp`;
  const handle = await open(tmp, "w", 0o600);
  try {
    let text = "";
    let at = 0;
    for await (const { text: line, number } of memoryLines(path)) {
      if (parseFileJson<Dated>(line, path, number).t < before) continue;
      text += `${line}\n`;
      if (text.length >= CHUNK) {
        at = await writeAt(handle, text, at);
        text = "";
      }
    }
    await writeAt(handle, text, at);
    await handle.sync();
    await unchangedSince(path, start);
  } catch (error) {
    await handle.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await handle.close();
  await rename(tmp, path);
}

/** Writes `text` at byte `position`, a short write going on where it stopped; returns the end. */
async function writeAt(handle: FileHandle, text: string, position: number): Promise<number> {
  const bytes = Buffer.from(text, "utf8");
  let done = 0;
  while (done < bytes.length)
    done += (await handle.write(bytes, done, bytes.length - done, position + done)).bytesWritten;
  return position + bytes.length;
}
