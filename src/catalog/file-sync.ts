import { mkdir, rename, rm } from "node:fs/promises";
import { basename, join, sep } from "node:path";
import { RunError } from "../errors/run-error.js";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { switchCurrentPointer } from "./current-pointer.js";
import { DamagedFileError } from "./damaged-file-error.js";
import { fsyncPath } from "./durable-files.js";
import { openFileSnapshot } from "./file-snapshot.js";
import { cleanLeftovers, markTmpDirActive } from "./leftover-cleanup.js";
import { loadPreviousRecords, type PreviousRecords } from "./previous-records.js";
import { readProductPages } from "./products-file-reader.js";
import { ShrinkRefusedError } from "./shrink-refused-error.js";
import {
  catalogDir,
  currentPointerPath,
  newSnapshotName,
  newTmpName,
  SNAPSHOT_FILES,
  snapshotsDir,
} from "./snapshot-layout.js";
import { pruneSnapshots } from "./snapshot-retention.js";
import { SnapshotWriter } from "./snapshot-writer.js";
import {
  adoptTmpDir,
  findCheckpoint,
  type SyncCheckpoint,
  saveCheckpoint,
} from "./sync-checkpoint.js";
import { acquireSyncLock, type SyncLock } from "./sync-lock.js";
import type {
  FinishedSnapshot,
  SyncPlan,
  SyncProgressMark,
  SyncResume,
  SyncSession,
  SyncStart,
} from "./sync-session.js";

/**
 * A sync into the file store (docs/architecture/catalog.md, "The life of a catalog page"): the
 * new snapshot is written in a temporary directory, renamed into snapshots/ when whole, and only
 * then does `current.json` point at it. One sync at a time per data directory (acquireSyncLock);
 * with a checkpoint, a sync that died carries on after its last page.
 */
export async function startFileSync(dataDir: string, plan: SyncPlan): Promise<SyncSession> {
  const lock = await acquireSyncLock(dataDir);
  try {
    return await FileSyncSession.prepare(dataDir, plan, lock);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

class FileSyncSession implements SyncSession {
  readonly resume: SyncResume | undefined;
  private writer: SnapshotWriter | undefined;
  private readonly name: string;
  private readonly fetchedAt: string;

  private constructor(
    private readonly dataDir: string,
    private readonly plan: SyncPlan,
    private readonly lock: SyncLock,
    private readonly dir: string,
    private readonly current: CatalogSnapshot | undefined,
    private readonly previous: PreviousRecords | undefined,
    private readonly checkpoint: SyncCheckpoint | undefined,
  ) {
    this.resume = checkpoint && {
      after: checkpoint.after,
      pages: checkpoint.pages,
      apiVersion: checkpoint.api_version,
      elapsedMs: checkpoint.elapsed_ms,
    };
    this.fetchedAt = checkpoint?.fetched_at ?? new Date(plan.started).toISOString();
    this.name = checkpoint?.snapshot ?? newSnapshotName(new Date(plan.started));
  }

  /** Clears what earlier syncs left, opens the current snapshot and the directory to write in. */
  static async prepare(dataDir: string, plan: SyncPlan, lock: SyncLock): Promise<FileSyncSession> {
    const { filters, limit, log } = plan;
    await mkdir(snapshotsDir(dataDir), { recursive: true });
    const found = plan.checkpoint
      ? await findCheckpoint(dataDir, { ...plan.checkpoint, filters, limit })
      : undefined;
    const removed = await cleanLeftovers(dataDir, { keep: found?.dir });
    if (removed.length > 0) log.info({ removed }, "removed leftovers of earlier syncs");
    const { current, previous } = await openPrevious(dataDir);
    const dir = found ? await adoptTmpDir(found.dir) : join(catalogDir(dataDir), newTmpName());
    if (!found) await mkdir(dir);
    markTmpDirActive(dir, true);
    return new FileSyncSession(dataDir, plan, lock, dir, current, previous, found?.checkpoint);
  }

  async begin(): Promise<SyncStart> {
    this.writer = await startWriter(this.dir, this.fetchedAt, this.previous, this.checkpoint);
    return { name: this.name, current: this.current, writer: this.writer };
  }

  /** Saves the checkpoint of a resumable sync: the cursor and what products.json holds. */
  async pageWritten(mark: SyncProgressMark): Promise<void> {
    const options = this.plan.checkpoint;
    if (!options || !this.writer) return;
    const checkpoint: SyncCheckpoint = {
      owner: options.owner,
      tmp: basename(this.dir),
      snapshot: this.name,
      fetched_at: this.fetchedAt,
      filters: this.plan.filters,
      limit: this.plan.limit,
      after: mark.after,
      pages: mark.pages,
      products: this.writer.productCount,
      bytes: this.writer.productBytes,
      api_version: mark.apiVersion,
      elapsed_ms: mark.elapsedMs,
    };
    await saveCheckpoint(this.dir, checkpoint);
    await options.onSave?.(checkpoint);
  }

  /** Renames the finished directory into snapshots/, then switches `current` to it. */
  async publish(_finished: FinishedSnapshot): Promise<string> {
    await rm(join(this.dir, SNAPSHOT_FILES.checkpoint), { force: true });
    await fsyncPath(this.dir);
    const target = join(snapshotsDir(this.dataDir), this.name);
    await rename(this.dir, target);
    await fsyncPath(snapshotsDir(this.dataDir));
    await switchCurrentPointer(this.dataDir, this.name);
    markTmpDirActive(this.dir, false);
    return target;
  }

  prune(keep: number): Promise<string[]> {
    return pruneSnapshots(this.dataDir, keep, this.name);
  }

  /**
   * Removes the temporary directory, unless a job's next attempt is to carry on from it (never
   * after a shrink refusal: the same catalog would be refused again).
   */
  async fail(error: unknown): Promise<Error | undefined> {
    await this.writer?.abort();
    const keep = this.plan.checkpoint?.keepOnFailure && !(error instanceof ShrinkRefusedError);
    if (!keep) await rm(this.dir, { recursive: true, force: true });
    markTmpDirActive(this.dir, false);
    if (
      error instanceof DamagedFileError &&
      this.current &&
      isInside(error.path, this.current.dir)
    ) {
      return damagedCurrent(error, this.dataDir);
    }
    return undefined;
  }

  end(): Promise<void> {
    return this.lock.release();
  }
}

/** The current snapshot and what the diff needs of it; either may be damaged (damagedCurrent). */
async function openPrevious(
  dataDir: string,
): Promise<{ current?: CatalogSnapshot; previous?: PreviousRecords }> {
  try {
    const current = await openFileSnapshot(dataDir);
    return { current, previous: current ? await loadPreviousRecords(current) : undefined };
  } catch (error) {
    throw error instanceof DamagedFileError ? damagedCurrent(error, dataDir) : error;
  }
}

/**
 * A current snapshot that cannot be read stops the sync, loudly, rather than publishing a diff
 * that would be wrong; the way on without it is for the user to choose.
 */
function damagedCurrent(error: DamagedFileError, dataDir: string): RunError {
  return new RunError(
    `catalog sync failed: cannot compare with the current snapshot: ${error.message}; ` +
      "nothing was published and the current snapshot is unchanged; to sync without " +
      `comparing, remove ${currentPointerPath(dataDir)}`,
    { cause: error },
  );
}

function isInside(path: string, dir: string): boolean {
  return path.startsWith(`${dir}${sep}`);
}

/** A fresh writer, or one rebuilt from the part of products.json a checkpoint vouches for. */
async function startWriter(
  dir: string,
  fetchedAt: string,
  previous: PreviousRecords | undefined,
  resume: SyncCheckpoint | undefined,
): Promise<SnapshotWriter> {
  if (!resume) return SnapshotWriter.create(dir, fetchedAt, previous);
  // Replaying the saved products through a new writer rebuilds the index, counts, warnings and
  // diff exactly as an uninterrupted run would have; it reads the local disk, not the service.
  const partial = join(dir, "products.partial");
  await rename(join(dir, SNAPSHOT_FILES.products), partial);
  const writer = await SnapshotWriter.create(dir, fetchedAt, previous);
  // Each page goes back byte for byte as it was written (as received, mostly).
  for await (const { products, text } of readProductPages(partial, { end: resume.bytes })) {
    await writer.add(products, Buffer.from(text, "utf8"));
  }
  await rm(partial, { force: true });
  if (writer.productCount !== resume.products) {
    await writer.abort();
    throw new RunError(
      `checkpoint of ${dir} promised ${resume.products} products, found ${writer.productCount}`,
    );
  }
  return writer;
}
