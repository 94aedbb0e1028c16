import { mkdir, rename, rm } from "node:fs/promises";
import { basename, join, sep } from "node:path";
import { ServiceUnreachableError } from "../api/errors/service-unreachable-error.js";
import { RunError } from "../errors/runtime-error.js";
import { silentLogger } from "../log.js";
import { filtersToQuery, normalizeFilters } from "./catalog-filters.js";
import { switchCurrentPointer } from "./current-pointer.js";
import { type CatalogSnapshot, openCurrentSnapshot } from "./current-snapshot.js";
import { DamagedFileError } from "./damaged-file-error.js";
import { fsyncPath } from "./durable-files.js";
import { cleanLeftovers, markTmpDirActive } from "./leftover-cleanup.js";
import { fetchPages } from "./page-fetcher.js";
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
import { describe, guardShrink } from "./sync-failure.js";
import { acquireSyncLock } from "./sync-lock.js";
import type { SyncCatalogOptions, SyncCatalogResult } from "./sync-options.js";

export type { SyncCatalogOptions, SyncCatalogResult, SyncProgress } from "./sync-options.js";

/**
 * Pages through GET /v2/product and publishes a new snapshot (products, manifest, index, diff)
 * atomically, then switches `current` to it and prunes old ones. Any failure — an HTTP error
 * that outlives its retries, a malformed page, a cursor that does not advance, the shrink
 * guard — throws a RunError and leaves the current snapshot as it was.
 */
export async function syncCatalog(options: SyncCatalogOptions): Promise<SyncCatalogResult> {
  if (options.database) {
    // Loaded here: pg only with a database (docs/architecture/command-line.md, "Start-up").
    const { syncIntoDatabase } = await import("../db/catalog-sync.js");
    return syncIntoDatabase(options, options.database);
  }
  // One sync at a time per store: see acquireSyncLock.
  const lock = await acquireSyncLock(options.dataDir);
  try {
    return await syncLocked(options);
  } finally {
    await lock.release();
  }
}

async function syncLocked(options: SyncCatalogOptions): Promise<SyncCatalogResult> {
  const log = options.log ?? silentLogger;
  const started = Date.now();
  const filters = normalizeFilters(options.filters);
  const limit = options.pageSize ?? 500;
  const dataDir = options.dataDir;
  await mkdir(snapshotsDir(dataDir), { recursive: true });

  const found = options.checkpoint
    ? await findCheckpoint(dataDir, { ...options.checkpoint, filters, limit })
    : undefined;
  const removed = await cleanLeftovers(dataDir, { keep: found?.dir });
  if (removed.length > 0) log.info({ removed }, "removed leftovers of earlier syncs");

  const { current, previous } = await openPrevious(dataDir);

  const resume = found?.checkpoint;
  const dir = found ? await adoptTmpDir(found.dir) : join(catalogDir(dataDir), newTmpName());
  if (!found) await mkdir(dir);
  markTmpDirActive(dir, true);
  const fetchedAt = resume?.fetched_at ?? new Date(started).toISOString();
  const name = resume?.snapshot ?? newSnapshotName(new Date(started));
  let writer: SnapshotWriter | undefined;
  let pages = resume?.pages ?? 0;
  try {
    writer = await startWriter(dir, fetchedAt, previous, resume);
    if (resume) log.info({ pages, products: writer.productCount }, "resuming catalog sync");
    let apiVersion = resume?.api_version ?? null;
    for await (const page of fetchPages({
      client: options.client,
      query: filtersToQuery(filters, limit),
      after: resume?.after,
      pagesBefore: pages,
      retry: options.retry,
      signal: options.signal,
      onRetry: (error, page, attempt) =>
        log.warn({ page, attempt, error: describe(error) }, "retrying catalog page"),
    })) {
      await writer.add(page.products, page.text);
      pages = page.number;
      apiVersion = page.apiVersion ?? apiVersion;
      if (options.checkpoint) {
        const checkpoint: SyncCheckpoint = {
          owner: options.checkpoint.owner,
          tmp: basename(dir),
          snapshot: name,
          fetched_at: fetchedAt,
          filters,
          limit,
          after: page.after,
          pages,
          products: writer.productCount,
          bytes: writer.productBytes,
          api_version: apiVersion,
          elapsed_ms: (resume?.elapsed_ms ?? 0) + Date.now() - started,
        };
        await saveCheckpoint(dir, checkpoint);
        await options.checkpoint.onSave?.(checkpoint);
      }
      options.onProgress?.({ pages, products: writer.productCount });
    }
    guardShrink(current, writer.productCount, filters, options);
    const { manifest, diff } = await writer.finish({
      snapshot: name,
      api_version: apiVersion ?? options.apiVersion ?? null,
      filters,
      pages,
      duration_ms: (resume?.elapsed_ms ?? 0) + Date.now() - started,
      resumed_after_page: resume?.pages,
    });
    const published = await publish(dataDir, dir, name);
    markTmpDirActive(dir, false);
    const pruned = await pruneSnapshots(dataDir, options.keep ?? 14, name);
    if (pruned.length > 0) log.info({ pruned }, "removed old snapshots");
    return {
      snapshot: name,
      dir: published,
      manifest,
      diff: { from: diff.from, summary: diff.summary },
      ...(resume ? { resumedAfterPage: resume.pages } : {}),
    };
  } catch (error) {
    await writer?.abort();
    const keep = options.checkpoint?.keepOnFailure && !(error instanceof ShrinkRefusedError);
    if (!keep) await rm(dir, { recursive: true, force: true });
    markTmpDirActive(dir, false);
    if (error instanceof DamagedFileError && current && isInside(error.path, current.dir)) {
      throw damagedCurrent(error, dataDir);
    }
    if (error instanceof RunError) throw error;
    if (error instanceof ServiceUnreachableError) {
      // Not about a page: the service is not there at all.
      throw new RunError(`${error.message} The current snapshot is unchanged.`, { cause: error });
    }
    const reason = describe(error);
    // Page checks name their page already; HTTP errors do not.
    const where = reason.startsWith("page ") ? "" : ` at page ${pages + 1}`;
    throw new RunError(
      `catalog sync failed${where}: ${reason}; the current snapshot is unchanged`,
      { cause: error },
    );
  }
}

/** The current snapshot and what the diff needs of it; either may be damaged (damagedCurrent). */
async function openPrevious(
  dataDir: string,
): Promise<{ current?: CatalogSnapshot; previous?: PreviousRecords }> {
  try {
    const current = await openCurrentSnapshot(dataDir);
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

/** Renames the finished directory into snapshots/, then switches `current` to it. */
async function publish(dataDir: string, dir: string, name: string): Promise<string> {
  await rm(join(dir, SNAPSHOT_FILES.checkpoint), { force: true });
  await fsyncPath(dir);
  const target = join(snapshotsDir(dataDir), name);
  await rename(dir, target);
  await fsyncPath(snapshotsDir(dataDir));
  await switchCurrentPointer(dataDir, name);
  return target;
}
