import { access } from "node:fs/promises";
import { join } from "node:path";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import {
  type CompactRecord,
  compactRecordOf,
  recordOfEntry,
  serialiseProduct,
} from "./compact-record.js";
import { atLine } from "./damaged-file-error.js";
import type { CatalogIndexEntry } from "./index-entry.js";
import { readLineBatches, readNumberedLineBatches } from "./line-reader.js";
import { PreviousDigests } from "./previous-digests.js";
import { catalogProductProblems } from "./product-check.js";
import { DIGESTS_HEADER, parseDigestLine, recordDigest } from "./record-digest.js";
import { SNAPSHOT_FILES } from "./snapshot-layout.js";

/** The previous snapshot as the diff sees it: a digest per code, full records on demand. */
export interface PreviousRecords {
  name: string;
  /** Digest of each code's record text, in the snapshot's order; the diff marks them seen. */
  digests: PreviousDigests;
  /** The full records of a few codes (the changed and removed ones), read again from disk. */
  read(codes: ReadonlySet<string>): Promise<Map<string, CompactRecord>>;
}

/**
 * Streams the compact records of `codes` from records.ndjson, which holds the products that
 * are not plain (see serialiseProduct), or every product in snapshots of earlier versions;
 * rebuilt from products.json when that file is missing (snapshots written before it existed).
 */
async function* compactRecords(
  snapshot: CatalogSnapshot,
  codes: ReadonlySet<string>,
): AsyncGenerator<CompactRecord[]> {
  const path = join(snapshot.dir, SNAPSHOT_FILES.records);
  if (await exists(path)) {
    for await (const { lines, first } of readNumberedLineBatches(path)) {
      const records: CompactRecord[] = [];
      lines.forEach((line, i) => {
        if (line === "") return;
        const record = atLine(path, first + i, () => recordOfLine(line, codes));
        if (record) records.push(record);
      });
      yield records;
    }
    return;
  }
  for await (const product of snapshot.products()) {
    if (codes.has(product.code)) yield [compactRecordOf(product)];
  }
}

/** The record of a records.ndjson line when its code is one of `codes`. */
function recordOfLine(line: string, codes: ReadonlySet<string>): CompactRecord | undefined {
  if (!codes.has(codeOfRecordLine(line))) return undefined;
  const record = JSON.parse(line) as CompactRecord;
  if (typeof record?.code !== "string") throw new Error("no code");
  return record;
}

/**
 * The plain products' records from index.json, whose entry lines are `"code":{entry}` with a
 * comma after all but the last (IndexFileWriter). Entries of subscription plans and of
 * products with problems are not records (those are in records.ndjson); of a code written
 * twice, the first is the record, as in SnapshotWriter.add.
 */
async function indexRecords(
  snapshot: CatalogSnapshot,
  codes: ReadonlySet<string>,
  out: Map<string, CompactRecord>,
): Promise<void> {
  const path = join(snapshot.dir, SNAPSHOT_FILES.index);
  for await (const { lines, first } of readNumberedLineBatches(path)) {
    lines.forEach((line, i) => {
      if (line.charCodeAt(0) !== 34 /* " */) return; // the first and last lines
      atLine(path, first + i, () => addIndexRecord(line, codes, out));
    });
  }
}

/** Adds the record of an index.json entry line to `out` when its code is wanted and plain. */
function addIndexRecord(
  line: string,
  codes: ReadonlySet<string>,
  out: Map<string, CompactRecord>,
): void {
  const key = jsonStringAt(line, 0);
  if (!codes.has(key.value) || out.has(key.value)) return;
  if (line[key.end] !== ":") throw new Error(`no ":" after the code`);
  const text = line.slice(key.end + 1, line.endsWith(",") ? -1 : undefined);
  const entry = JSON.parse(text) as CatalogIndexEntry;
  if (entry.plan_of === undefined && entry.problems === undefined) {
    out.set(key.value, recordOfEntry(entry));
  }
}

const CODE_PREFIX = '{"code":';

/**
 * The code of a records.ndjson line without parsing all of it: lines are written by
 * JSON.stringify of an object whose first key is the code.
 */
function codeOfRecordLine(line: string): string {
  if (!line.startsWith(`${CODE_PREFIX}"`)) return (JSON.parse(line) as CompactRecord).code;
  return jsonStringAt(line, CODE_PREFIX.length).value;
}

/** The JSON string whose opening quote is at `start`, and the index just past its end. */
function jsonStringAt(line: string, start: number): { value: string; end: number } {
  let end = start + 1;
  while (end < line.length && line.charCodeAt(end) !== 34 /* " */) {
    end += line.charCodeAt(end) === 92 /* \ */ ? 2 : 1;
  }
  return { value: JSON.parse(line.slice(start, end + 1)) as string, end: end + 1 };
}

/**
 * The digests saved beside the records (digests.txt), or undefined when the file is missing or
 * of an earlier version (older snapshots) or holds a line that is not a digest line: then they
 * are computed again.
 */
async function savedDigests(snapshot: CatalogSnapshot): Promise<PreviousDigests | undefined> {
  const path = join(snapshot.dir, SNAPSHOT_FILES.digests);
  if (!(await exists(path))) return undefined;
  const digests = new PreviousDigests();
  let first = true;
  for await (const lines of readLineBatches(path)) {
    for (const line of lines) {
      if (first) {
        if (line !== DIGESTS_HEADER) return undefined;
        first = false;
        continue;
      }
      if (line === "") continue;
      const parsed = parseDigestLine(line);
      if (!parsed) return undefined;
      digests.push(parsed.code, parsed.digest);
    }
  }
  return first ? undefined : digests;
}

/**
 * The digests a snapshot without digests.txt would have saved, from its products: its own
 * records.ndjson may hold lines of an older shape, whose digests would all differ.
 */
async function computedDigests(snapshot: CatalogSnapshot): Promise<PreviousDigests> {
  const digests = new PreviousDigests();
  const codes = new Set<string>();
  for await (const product of snapshot.products()) {
    // The first of a repeated code is the one with a record, as in SnapshotWriter.add.
    if (codes.has(product.code)) continue;
    codes.add(product.code);
    const { record } = serialiseProduct(product, catalogProductProblems(product));
    digests.push(product.code, recordDigest(record));
  }
  return digests;
}

export async function loadPreviousRecords(snapshot: CatalogSnapshot): Promise<PreviousRecords> {
  const digests = (await savedDigests(snapshot)) ?? (await computedDigests(snapshot));
  return {
    name: snapshot.name,
    digests,
    read: async (codes) => {
      const out = new Map<string, CompactRecord>();
      if (codes.size === 0) return out;
      for await (const records of compactRecords(snapshot, codes)) {
        for (const record of records) out.set(record.code, record);
      }
      if (out.size < codes.size) await indexRecords(snapshot, codes, out);
      return out;
    },
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
