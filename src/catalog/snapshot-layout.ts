import { randomBytes } from "node:crypto";
import { join } from "node:path";

/**
 * Where the snapshot store keeps things, under `$GIFTJOBS_DATA_DIR/catalog/`:
 * `snapshots/<time>-<rand>/` (published, never modified), `current.json` (the pointer) and
 * `tmp-<pid>-<rand>/` (a sync being written; renamed into `snapshots/` when complete).
 * Temporary directories sit beside `snapshots/` so that the publishing rename never crosses
 * a file system.
 */
export const SNAPSHOT_FILES = {
  products: "products.json",
  manifest: "manifest.json",
  index: "index.json",
  diff: "diff.json",
  /**
   * The compact diff records of the products whose index entry is not their record (see
   * serialiseProduct), one per line; the next sync reads old values from it and index.json.
   */
  records: "records.ndjson",
  /**
   * A version line (DIGESTS_HEADER), then each product's record digest with its code
   * (digestLine): the next sync loads these rather than hashing every record again.
   */
  digests: "digests.txt",
  /** Only in a temporary directory: how far a resumable sync got. */
  checkpoint: "checkpoint.json",
} as const;

export function catalogDir(dataDir: string): string {
  return join(dataDir, "catalog");
}

export function snapshotsDir(dataDir: string): string {
  return join(catalogDir(dataDir), "snapshots");
}

export function currentPointerPath(dataDir: string): string {
  return join(catalogDir(dataDir), "current.json");
}

function rand(): string {
  return randomBytes(4).toString("hex");
}

/** `2026-11-21T10-00-00-000Z-1a2b3c4d`: sorts by time, safe on every file system. */
export function newSnapshotName(now: Date): string {
  return `${now.toISOString().replace(/[:.]/g, "-")}-${rand()}`;
}

export function newTmpName(pid = process.pid): string {
  return `tmp-${pid}-${rand()}`;
}

/** The pid that wrote a temporary directory, or undefined when the name is not one of ours. */
export function tmpOwnerPid(name: string): number | undefined {
  const match = /^tmp-(\d+)-[0-9a-f]+$/.exec(name);
  return match ? Number(match[1]) : undefined;
}
