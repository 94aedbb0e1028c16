import { readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type NormalizedFilters, sameFilters } from "./catalog-filters.js";
import { catalogDir, newTmpName, SNAPSHOT_FILES, tmpOwnerPid } from "./snapshot-layout.js";

/** How far a resumable sync got: saved after each page, in its temporary directory and by its job. */
export interface SyncCheckpoint {
  /** Who may resume it (the job id). */
  owner: string;
  /** The temporary directory (name under `catalog/`). */
  tmp: string;
  /** The snapshot name and start time chosen by the first attempt, kept by the resumed ones. */
  snapshot: string;
  fetched_at: string;
  filters: NormalizedFilters;
  limit: number;
  /** Cursor of the next page to fetch. */
  after: string;
  pages: number;
  products: number;
  /** Length of products.json that holds exactly `products` products. */
  bytes: number;
  api_version: string | null;
  /** Time spent by earlier attempts. */
  elapsed_ms: number;
}

/** Makes a sync resumable (used by the catalog-sync job). */
export interface CheckpointOptions {
  /** Identity of the run that may resume a checkpoint: the job id. */
  owner: string;
  /** The checkpoint the job data holds, if any; the local file wins when both exist. */
  saved?: SyncCheckpoint;
  /** Called after each page's checkpoint is on disk (the job stores it with job.updateData). */
  onSave?: (checkpoint: SyncCheckpoint) => Promise<void>;
  /**
   * Keep the temporary directory and checkpoint when the sync fails, so that the next attempt
   * resumes; the job sets it on every attempt but the last. @defaultValue false
   */
  keepOnFailure?: boolean;
}

export async function saveCheckpoint(dir: string, checkpoint: SyncCheckpoint): Promise<void> {
  // write + rename: a kill leaves the old checkpoint or the new, never half of one.
  const path = join(dir, SNAPSHOT_FILES.checkpoint);
  await writeFile(`${path}.tmp`, JSON.stringify(checkpoint));
  await rename(`${path}.tmp`, path);
}

async function readCheckpoint(dir: string): Promise<SyncCheckpoint | undefined> {
  try {
    return JSON.parse(
      await readFile(join(dir, SNAPSHOT_FILES.checkpoint), "utf8"),
    ) as SyncCheckpoint;
  } catch {
    return undefined;
  }
}

/**
 * The checkpoint this owner can resume from in this data directory, or undefined. The local file
 * is the truth (it is written before the job data, and only it vouches for products.json);
 * job data only says where to look first. A checkpoint for other filters or page size is ignored.
 */
export async function findCheckpoint(
  dataDir: string,
  options: { owner: string; saved?: SyncCheckpoint; filters: NormalizedFilters; limit: number },
): Promise<{ dir: string; checkpoint: SyncCheckpoint } | undefined> {
  const root = catalogDir(dataDir);
  const names = await readdir(root).catch(() => [] as string[]);
  const candidates = names.filter((n) => tmpOwnerPid(n) !== undefined);
  if (options.saved && candidates.includes(options.saved.tmp)) {
    candidates.unshift(options.saved.tmp);
  }
  for (const name of candidates) {
    const dir = join(root, name);
    const checkpoint = await readCheckpoint(dir);
    if (!checkpoint || checkpoint.owner !== options.owner) continue;
    if (!sameFilters(checkpoint.filters, options.filters) || checkpoint.limit !== options.limit) {
      continue;
    }
    const products = await stat(join(dir, SNAPSHOT_FILES.products)).catch(() => undefined);
    if (!products || products.size < checkpoint.bytes) continue;
    return { dir, checkpoint };
  }
  return undefined;
}

/** Renames a checkpointed directory to this process's pid, so cleanups see a live owner. */
export async function adoptTmpDir(dir: string): Promise<string> {
  if (tmpOwnerPid(basename(dir)) === process.pid) return dir;
  const adopted = join(dirname(dir), newTmpName());
  await rename(dir, adopted);
  return adopted;
}
