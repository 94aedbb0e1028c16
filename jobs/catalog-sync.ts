import { type Job, UnrecoverableError } from "bullmq";
import type { ApiClient } from "../src/api/client.js";
import type { CatalogFilters } from "../src/catalog/catalog-filters.js";
import type { RetryOptions } from "../src/catalog/retry-policy.js";
import { ShrinkRefusedError } from "../src/catalog/shrink-refused-error.js";
import { syncCatalog } from "../src/catalog/sync-catalog.js";
import type { SyncCheckpoint } from "../src/catalog/sync-checkpoint.js";
import { type Logger, silentLogger } from "../src/log.js";

/** Data of a catalog-sync job; the scheduler's template sets the filters. */
export interface CatalogSyncJobData {
  filters?: CatalogFilters;
  allowShrink?: boolean;
  /** How far an earlier attempt got; written by the processor itself. */
  checkpoint?: SyncCheckpoint;
}

/** What a catalog-sync job returns (kept in Redis as the job's return value). */
export interface CatalogSyncJobResult {
  snapshot: string;
  products: number;
  pages: number;
  added: number;
  removed: number;
  changed: number;
  warnings: number;
  resumedAfterPage: number | null;
}

export interface CatalogSyncDeps {
  client: ApiClient;
  dataDir: string;
  /** Configured X-Api-Version, recorded when the service does not echo one. */
  apiVersion?: string;
  /** @defaultValue silent */
  log?: Logger;
  retry?: RetryOptions;
  /** Snapshots kept. @defaultValue 14 */
  keep?: number;
  /** Products per page. @defaultValue 500 */
  pageSize?: number;
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
): (job: Job<CatalogSyncJobData>) => Promise<CatalogSyncJobResult> {
  return async (job) => {
    const log = (deps.log ?? silentLogger).child({ jobId: job.id, queue: job.queueName });
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    try {
      const result = await syncCatalog({
        client: deps.client,
        dataDir: deps.dataDir,
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
      throw error;
    }
  };
}
