import { access } from "node:fs/promises";
import { join } from "node:path";
import { type CompactRecord, compactRecordOf, serialiseProduct } from "./compact-record.js";
import type { CatalogSnapshot } from "./current-snapshot.js";
import { readLineBatches } from "./line-reader.js";
import { catalogProductProblems } from "./product-check.js";
import { parseDigestLine, recordDigest } from "./record-digest.js";
import { SNAPSHOT_FILES } from "./snapshot-layout.js";

/** The previous snapshot as the diff sees it: a digest per code, full records on demand. */
export interface PreviousRecords {
  name: string;
  /** Digest of each code's compact record line; the diff consumes (empties) it. */
  digests: Map<string, string>;
  /** The full records of a few codes (the changed and removed ones), read again from disk. */
  read(codes: ReadonlySet<string>): Promise<Map<string, CompactRecord>>;
}

/**
 * Streams a snapshot's compact records: from records.ndjson, or rebuilt from products.json
 * when that file is missing (snapshots written before it existed).
 */
async function* compactRecords(snapshot: CatalogSnapshot): AsyncGenerator<[string, string][]> {
  const path = join(snapshot.dir, SNAPSHOT_FILES.records);
  if (await exists(path)) {
    for await (const lines of readLineBatches(path)) {
      yield lines.filter((line) => line !== "").map((line) => [codeOfRecordLine(line), line]);
    }
    return;
  }
  for await (const product of snapshot.products()) {
    const record = compactRecordOf(product);
    yield [[record.code, JSON.stringify(record)]];
  }
}

const CODE_PREFIX = '{"code":"';

/**
 * The code of a records.ndjson line without parsing all of it: lines are written by
 * JSON.stringify(compactRecordOf(...)), so they start with the code as a JSON string.
 */
function codeOfRecordLine(line: string): string {
  if (!line.startsWith(CODE_PREFIX)) return (JSON.parse(line) as CompactRecord).code;
  let end = CODE_PREFIX.length;
  while (end < line.length && line.charCodeAt(end) !== 34 /* " */) {
    end += line.charCodeAt(end) === 92 /* \ */ ? 2 : 1;
  }
  return JSON.parse(line.slice(CODE_PREFIX.length - 1, end + 1)) as string;
}

/**
 * The digests saved beside the records (digests.txt), or undefined when the file is missing
 * (older snapshots) or holds a line that is not a digest line: then they are computed again.
 */
async function savedDigests(snapshot: CatalogSnapshot): Promise<Map<string, string> | undefined> {
  const path = join(snapshot.dir, SNAPSHOT_FILES.digests);
  if (!(await exists(path))) return undefined;
  const digests = new Map<string, string>();
  for await (const lines of readLineBatches(path)) {
    for (const line of lines) {
      if (line === "") continue;
      const parsed = parseDigestLine(line);
      if (!parsed) return undefined;
      digests.set(parsed.code, parsed.digest);
    }
  }
  return digests;
}

/**
 * The digests a snapshot without digests.txt would have saved, from its products: its own
 * records.ndjson may hold lines of an older shape, whose digests would all differ.
 */
async function computedDigests(snapshot: CatalogSnapshot): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for await (const product of snapshot.products()) {
    // The first of a repeated code is the one with a record, as in SnapshotWriter.add.
    if (digests.has(product.code)) continue;
    const { line } = serialiseProduct(product, catalogProductProblems(product));
    digests.set(product.code, recordDigest(line));
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
      for await (const batch of compactRecords(snapshot)) {
        for (const [code, line] of batch) {
          if (codes.has(code)) out.set(code, JSON.parse(line) as CompactRecord);
        }
      }
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
