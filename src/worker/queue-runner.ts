import type { Worker } from "bullmq";
import type { ServiceContact } from "../campaigns/worker-beats.js";
import type { Logger } from "../log.js";
import type { RedisConnection } from "../redis/connection.js";
import type { OutageReporter } from "../redis/outage-reporter.js";
import type { Stores } from "../stores/stores.js";
import type { ActiveJobs } from "./shutdown.js";
import type { StartWorkersOptions } from "./worker-options.js";

/** What every queue's worker is started with: the process's connection, log and options. */
export interface QueueContext {
  options: StartWorkersOptions;
  connection: RedisConnection;
  outage: OutageReporter;
  log: Logger;
  /** Counts the jobs running now, for the stop (shutdown.ts). */
  active: ActiveJobs;
  /**
   * The stores, opened once at start (src/stores/stores.ts): the data dir's files, or PostgreSQL
   * when GIFTJOBS_DATABASE_URL is set, its schema checked (docs/catalog-database.md).
   */
  stores: Stores;
}

/** One queue's running worker, and what runs beside it, in the order a stop takes them. */
export interface QueueRunner {
  worker: Worker;
  /** Stopped before the workers close (the dispatcher: no more jobs added). */
  beforeWorkers?: () => Promise<unknown>;
  /** Stopped after the workers closed, before Redis does (follower, tracker, queue). */
  afterWorkers?: () => Promise<unknown>;
  /** The service as this queue's requests find it, for the process's heartbeat. */
  serviceContact?: () => ServiceContact;
}

/**
 * Logs `error` unless it is Redis being away, which `outage` reports in its own lines, or a job
 * lock lost to a long outage, which is an info line.
 */
export function quietIfAway(outage: OutageReporter, log: Logger, error: Error, what: string): void {
  if (outage.failed(error)) return;
  // After an outage longer than the lock duration, BullMQ finds a job's lock gone, or the job
  // itself gone: taken over as stalled, finished by its taker and removed (removeOnComplete).
  // Nothing to do: its order is found past START (same key, no repeat).
  const lost = LOST_LOCK.exec(error.message);
  if (lost)
    log.info(
      { job: lost[1] ?? lost[2] },
      "a job's lock ran out (Redis away too long?); it is taken over",
    );
  else log.error({ err: error }, what);
}

/**
 * BullMQ's errors when a job's lock is gone: it could not be renewed (lock-manager), or the job
 * could not be finished or delayed without it (`Missing lock for job X. moveToFinished`), or the
 * job was finished by the worker that took it over (`Missing key for job X. moveToDelayed`).
 */
const LOST_LOCK =
  /^(?:could not renew lock for job (\S+)|Missing (?:lock|key) for job (\S+)\. \w+)$/;
