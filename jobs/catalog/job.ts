import type { DefaultJobOptions } from "bullmq";
import type { CatalogFilters } from "../../src/catalog/catalog-filters.js";
import type { SyncCheckpoint } from "../../src/catalog/sync-checkpoint.js";

/**
 * The `catalog` queue: catalog syncs, added by the nightly job scheduler or by hand
 * (schedule.ts), run by the processor (process.ts).
 */
export const CATALOG_QUEUE = "catalog";

/** Data of a catalog-sync job; the scheduler's template sets the filters. */
export interface CatalogSyncJobData {
  filters?: CatalogFilters;
  allowShrink?: boolean;
  /** How far an earlier attempt got; written by the processor itself. */
  checkpoint?: SyncCheckpoint;
  /** Times this job found another sync running and waited for it; written by the processor. */
  lockWaits?: number;
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

/**
 * @defaultValue of `--cron`: 02:00 every night. Here, not in schedule.ts, so that the CLI's
 * definitions show it without loading BullMQ (docs/architecture/command-line.md, "Start-up").
 */
export const DEFAULT_CATALOG_CRON = "0 2 * * *";

export const CATALOG_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 30_000, jitter: 0.3 },
  removeOnComplete: { count: 50 },
  removeOnFail: { count: 50 },
};
