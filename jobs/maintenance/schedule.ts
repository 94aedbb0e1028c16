import { Queue } from "bullmq";
import type { RedisConnection } from "../../src/redis/connection.js";
import {
  FORGET_CRON,
  FORGET_JOB_NAME,
  FORGET_JOB_OPTIONS,
  FORGET_SCHEDULER_ID,
  MAINTENANCE_QUEUE,
} from "./job.js";

export interface ForgetScheduleOptions {
  /** A connection BullMQ may share (it is not closed here). */
  connection: RedisConnection;
  /** Redis key prefix (config.prefix). */
  prefix: string;
}

/**
 * Registers the nightly job's scheduler (or keeps it: an upsert of the same id). Every worker
 * serving the `maintenance` queue does this at start, whatever GIFTJOBS_FORGET_AFTER_DAYS says:
 * the paid memory is pruned every night (docs/architecture/repeats.md, "How long it is kept"),
 * and the job forgets campaigns only with the setting. Returns when the next run is due.
 */
export async function syncNightlySchedule(
  options: ForgetScheduleOptions,
): Promise<Date | undefined> {
  const queue = new Queue(MAINTENANCE_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
  });
  try {
    await queue.upsertJobScheduler(
      FORGET_SCHEDULER_ID,
      { pattern: FORGET_CRON, tz: "UTC" },
      { name: FORGET_JOB_NAME, data: {}, opts: FORGET_JOB_OPTIONS },
    );
    const scheduler = await queue.getJobScheduler(FORGET_SCHEDULER_ID);
    return scheduler?.next ? new Date(scheduler.next) : undefined;
  } finally {
    await queue.close();
  }
}
