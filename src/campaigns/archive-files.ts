import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { rename, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { DamagedFileError, parseFileJson, readFileJson } from "../catalog/damaged-file-error.js";
import { fsyncPath, replaceFileAtomically } from "../catalog/durable-files.js";
import { sha256OfFile } from "../catalog/file-snapshot.js";
import type { LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";

/** The files of a campaign's archive (docs/architecture/campaigns.md, "Archive"). */
export const ARCHIVE_FILES = {
  report: "report.csv",
  ledger: "ledger.ndjson.gz",
  manifest: "manifest.json",
} as const;

export const ARCHIVE_FORMAT = "giftjobs-campaign-archive";

/**
 * The version of the archive's files. 2: orders by number, bodies made from rows and orders
 * (docs/architecture/ledger.md, "Redis keys"). A version 1 archive (giftjobs 0.1, orders by key
 * with their request bodies) still gives its report; it is restored by the version that wrote it.
 */
export const ARCHIVE_VERSION = 2;

/** `$GIFTJOBS_DATA_DIR/campaigns/NAME/archive`. */
export function archiveDir(dataDir: string, campaign: string): string {
  return join(dataDir, "campaigns", campaign, "archive");
}

export interface ArchivedFile {
  /** Hex, of the bytes on disk. */
  sha256: string;
  bytes: number;
}

/** manifest.json: written last; an archive without one is not finished. */
export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  campaign: string;
  archived_at: string;
  /** The stored state the campaign had before the archive (a restore gives it back). */
  state: StoredState;
  rows: number;
  orders: number;
  files: Record<typeof ARCHIVE_FILES.report | typeof ARCHIVE_FILES.ledger, ArchivedFile>;
}

/**
 * One line of the compact ledger (gzip NDJSON), in this order: `campaign`, `meta`, `counts`,
 * every `row`, every `order`, `end`. Rows and orders are the ledger's records, with their
 * field names spelt out (a row's status is its order's, written beside it for readers of the
 * file). A restored order's body is made from them, as in Redis.
 */
export type ArchiveLine =
  | { type: "campaign"; format: typeof ARCHIVE_FORMAT; version: number; campaign: string }
  | { type: "meta"; meta: Record<string, string> }
  | { type: "counts"; counts: Record<string, string> }
  | { type: "row"; identity: string; status: string; row: LedgerRow }
  | { type: "order"; number: number; order: LedgerOrder }
  | { type: "end"; rows: number; orders: number };

/**
 * Writes `lines` as gzip NDJSON to `path` durably: a temporary name in the same folder,
 * flushed, renamed over `path`, the folder flushed.
 */
export async function writeLedgerFile(
  path: string,
  lines: AsyncIterable<ArchiveLine>,
): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  async function* text() {
    for await (const line of lines) yield `${JSON.stringify(line)}\n`;
  }
  await pipeline(Readable.from(text()), createGzip(), createWriteStream(temporary));
  await fsyncPath(temporary);
  await rename(temporary, path);
  await fsyncPath(dirname(path));
}

/**
 * Reads the compact ledger back, line by line, checking its shape as it goes: a file cut
 * short, edited or of another campaign is a DamagedFileError naming the line. Returns the
 * sha256 of its bytes and what its `end` line counted.
 */
export async function readLedgerFile(
  path: string,
  campaign: string,
  onLine: (line: ArchiveLine) => Promise<void> | void = () => undefined,
): Promise<ArchivedFile & { rows: number; orders: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  raw.on("data", (chunk) => {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  });
  const gunzip = createGunzip();
  raw.on("error", (error) => gunzip.destroy(error));
  raw.pipe(gunzip);
  let n = 0;
  let rows = 0;
  let orders = 0;
  let end: Extract<ArchiveLine, { type: "end" }> | undefined;
  let readerFailed = false;
  try {
    for await (const text of splitLines(gunzip)) {
      n += 1;
      if (end) throw new DamagedFileError(path, n, "a line after the end line");
      const line = parseFileJson<ArchiveLine>(text, path, n);
      if (n === 1) {
        if (line.type !== "campaign" || line.format !== ARCHIVE_FORMAT)
          throw new DamagedFileError(path, n, "not a giftjobs campaign archive");
        if (line.version !== ARCHIVE_VERSION)
          throw new DamagedFileError(
            path,
            n,
            `an archive of version ${line.version}, which this giftjobs does not restore (it restores version ${ARCHIVE_VERSION}); orders report still gives its report`,
          );
        if (line.campaign !== campaign)
          throw new DamagedFileError(path, n, `the archive of campaign ${line.campaign}`);
      } else if (line.type === "row") rows += 1;
      else if (line.type === "order") orders += 1;
      else if (line.type === "end") end = line;
      else if (line.type !== "meta" && line.type !== "counts")
        throw new DamagedFileError(path, n, "a line of an unknown type");
      try {
        await onLine(line);
      } catch (error) {
        // The reader's own failure (Redis, say), not the file's.
        readerFailed = true;
        throw error;
      }
    }
  } catch (error) {
    if (error instanceof DamagedFileError || readerFailed) throw error;
    throw new DamagedFileError(path, undefined, `unreadable (${(error as Error).message})`);
  } finally {
    raw.destroy();
  }
  if (!end) throw new DamagedFileError(path, undefined, "cut short (no end line)");
  if (end.rows !== rows || end.orders !== orders)
    throw new DamagedFileError(path, n, "its end line does not count the lines before it");
  return { sha256: hash.digest("hex"), bytes, rows, orders };
}

/** The lines of a stream of UTF-8 text (its errors, such as a damaged gzip, are thrown). */
async function* splitLines(stream: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let rest = "";
  for await (const chunk of stream) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    rest = parts.pop()!;
    yield* parts;
  }
  rest += decoder.decode();
  if (rest !== "") yield rest;
}

/** sha256 and size of a file as it is on disk. */
export async function describeFile(path: string): Promise<ArchivedFile> {
  const [sha256, info] = await Promise.all([sha256OfFile(path), stat(path)]);
  return { sha256, bytes: info.size };
}

export async function writeManifest(dir: string, manifest: ArchiveManifest): Promise<void> {
  await replaceFileAtomically(
    join(dir, ARCHIVE_FILES.manifest),
    `${JSON.stringify(manifest, null, 2)}\n`,
  );
}

/** The archive's manifest, or undefined when there is none (an archive never finished). */
export async function readManifest(dir: string): Promise<ArchiveManifest | undefined> {
  const path = join(dir, ARCHIVE_FILES.manifest);
  const manifest = await readFileJson<ArchiveManifest>(path);
  if (!manifest) return undefined;
  // A version 1 manifest still gives its report (see ARCHIVE_VERSION).
  const known = manifest?.version === 1 || manifest?.version === ARCHIVE_VERSION;
  if (manifest?.format !== ARCHIVE_FORMAT || !known || !manifest.files)
    throw new DamagedFileError(path, undefined, "not a giftjobs campaign archive manifest");
  return manifest;
}

/**
 * Checks archive files (`files`: the manifest's, or some of them) against their sha256 and
 * size: any difference (an edited, truncated or missing file) is a DamagedFileError naming it.
 */
export async function verifyArchiveFiles(
  dir: string,
  files: Partial<ArchiveManifest["files"]>,
): Promise<void> {
  for (const [name, expected] of Object.entries(files)) {
    if (!expected) continue;
    const path = join(dir, name);
    let actual: ArchivedFile;
    try {
      actual = await describeFile(path);
    } catch (error) {
      throw new DamagedFileError(path, undefined, `unreadable (${(error as Error).message})`);
    }
    if (actual.sha256 !== expected.sha256 || actual.bytes !== expected.bytes)
      throw new DamagedFileError(
        path,
        undefined,
        `changed since it was archived (sha256 differs from ${ARCHIVE_FILES.manifest})`,
      );
  }
}
