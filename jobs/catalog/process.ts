import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import type { ApiClient } from "../../src/api/client.js";
import type { CatalogStore } from "../../src/catalog/catalog-store.js";
import type { RetryOptions } from "../../src/catalog/retry-policy.js";
import { ShrinkRefusedError } from "../../src/catalog/shrink-refused-error.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { SyncLockHeldError } from "../../src/catalog/sync-lock.js";
import { LockHeldError } from "../../src/db/advisory-lock.js";
import { type Logger, silentLogger } from "../../src/log.js";
import type { CatalogSyncJobData, CatalogSyncJobResult } from "./job.js";

export interface CatalogSyncDeps {
  client: ApiClient;
  /**
   * The catalog store (src/stores/stores.ts): the data dir's files (a job that dies mid-sync
   * continues after its last page, from the local checkpoint), or PostgreSQL, where the sync is
   * one transaction, so a job that dies mid-sync starts again from page 1
   * (docs/catalog-database.md, "Syncing").
   */
  store: CatalogStore;
  /** Configured X-Api-Version, recorded when the service does not echo one. */
  apiVersion?: string;
  /** @defaultValue silent */
  log?: Logger;
  retry?: RetryOptions;
  /** Snapshots kept. @defaultValue DEFAULT_KEEP (src/catalog/sync-defaults.ts) */
  keep?: number;
  /** Products per page. @defaultValue DEFAULT_PAGE_SIZE (src/catalog/sync-defaults.ts) */
  pageSize?: number;
  /** How long a job that finds another sync running waits before it tries again. @defaultValue 60000 */
  lockWaitMs?: number;
  /** Waits for another sync before the job gives up. @defaultValue 120 (two hours at the default wait) */
  maxLockWaits?: number;
}

/**
 * The processor of `catalog-sync` jobs on the `catalog` queue: the same syncCatalog as
 * `giftjobs catalog sync`, made resumable. After each page the cursor and counts go to a local
 * checkpoint file and to the job data, so when a worker dies mid-sync the next attempt (on the
 * same machine, which holds the pages written so far) continues after the last page. A shrink
 * refusal is not retried; other failures are, per the queue's attempts.
 */
export function createCatalogSyncProcessor(
  deps: CatalogSyncDeps,
): (job: Job<CatalogSyncJobData>, token?: string) => Promise<CatalogSyncJobResult> {
  return async (job, token) => {
    const log = (deps.log ?? silentLogger).child({ jobId: job.id, queue: job.queueName });
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    try {
      const result = await syncCatalog({
        client: deps.client,
        dataDir: deps.store.dataDir,
        store: deps.store,
        apiVersion: deps.apiVersion,
        retry: deps.retry,
        keep: deps.keep,
        pageSize: deps.pageSize,
        filters: job.data.filters,
        allowShrink: job.data.allowShrink,
        log,
        checkpoint: {
          owner: String(job.id),
          saved: job.data.checkpoint,
          keepOnFailure: !lastAttempt,
          onSave: async (checkpoint) => {
            await job.updateData({ ...job.data, checkpoint });
            await job.updateProgress({ pages: checkpoint.pages, products: checkpoint.products });
          },
        },
      });
      const { summary } = result.diff;
      log.info({ snapshot: result.snapshot, ...summary }, "catalog snapshot published");
      return {
        snapshot: result.snapshot,
        products: result.manifest.product_count,
        pages: result.manifest.pages,
        added: summary.added,
        removed: summary.removed,
        changed: summary.changed,
        warnings: result.manifest.warnings.length,
        resumedAfterPage: result.resumedAfterPage ?? null,
      };
    } catch (error) {
      // Fetching the same smaller catalog again would be refused again: do not retry.
      if (error instanceof ShrinkRefusedError) throw new UnrecoverableError(error.message);
      // Another sync into the same store, through the file lock or the database's.
      if ((error instanceof SyncLockHeldError || error instanceof LockHeldError) && token)
        return waitForOtherSync(job, token, deps, log);
      throw error;
    }
  };
}

/**
 * Another sync (a manual `catalog sync`, say) holds the lock: the job looks again later instead
 * of failing an attempt, so a long manual run does not use up the nightly job's attempts and
 * lose that night's snapshot. The waits are capped, so a lock that never frees ends the job.
 */
async function waitForOtherSync(
  job: Job<CatalogSyncJobData>,
  token: string,
  deps: CatalogSyncDeps,
  log: Logger,
): Promise<never> {
  const waits = (job.data.lockWaits ?? 0) + 1;
  const maxWaits = deps.maxLockWaits ?? 120;
  const waitMs = deps.lockWaitMs ?? 60_000;
  if (waits > maxWaits) {
    throw new UnrecoverableError(
      `another catalog sync held the lock through ${maxWaits} waits of ${waitMs} ms; giving up`,
    );
  }
  await job.updateData({ ...job.data, lockWaits: waits });
  log.info({ wait_ms: waitMs, waits }, "another catalog sync is running; waiting for it");
  await job.moveToDelayed(Date.now() + waitMs, token);
  throw new DelayedError();
}
