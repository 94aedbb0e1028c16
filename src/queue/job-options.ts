import type { DefaultJobOptions } from "bullmq";

/**
 * Defaults for order jobs. Attempts with exponential backoff and jitter are the outer retry
 * layer; p-retry inside one attempt covers only short blips, so the two do not multiply.
 * Completed jobs are removed at once (the ledger is the record, and the jobs in Redis stay
 * bounded by the dispatch windows); the few failed ones (lost jobs) are kept for inspection.
 */
export const ORDER_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: "exponential", delay: 2000, jitter: 0.5 },
  removeOnComplete: true,
  removeOnFail: { count: 1000 },
};

export const CATALOG_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 30_000, jitter: 0.3 },
  removeOnComplete: { count: 50 },
  removeOnFail: { count: 50 },
};
