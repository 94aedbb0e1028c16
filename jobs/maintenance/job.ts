import type { DefaultJobOptions } from "bullmq";

/**
 * The `maintenance` queue: the nightly forget of ended campaigns (docs/architecture/forgetting.md,
 * "The nightly job") and prune of the paid memory (docs/architecture/repeats.md, "How long it is
 * kept"), added by its job scheduler (schedule.ts), run by the processor (process.ts).
 */
export const MAINTENANCE_QUEUE = "maintenance";

/** Name of the nightly jobs (the name they had when they only forgot: schedulers keep it). */
export const FORGET_JOB_NAME = "forget-ended";

/** Id of its job scheduler: one per prefix, however many workers register it. */
export const FORGET_SCHEDULER_ID = "forget-nightly";

/** 03:30 UTC every night: after the catalog sync's default 02:00. */
export const FORGET_CRON = "30 3 * * *";

/** Data of a forget job: the scheduler's is empty; the setting is read by the worker. */
export type ForgetJobData = Record<string, never>;

/** What a forget job returns (kept in Redis as its return value): no e-mail, names only. */
export interface ForgetJobResult {
  ended_before: string;
  campaigns: string[];
  rows: number;
  skipped: string[];
  /** The paid memory's entries and imported-file records pruned, recorded before this time. */
  paid_memory: { recorded_before: string; entries: number; imports: number };
}

export const FORGET_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 60_000 },
  removeOnComplete: { count: 30 },
  removeOnFail: { count: 30 },
};
