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
 * With GIFTJOBS_FORGET_AFTER_DAYS set, the nightly forget's job scheduler is registered (or kept:
 * an upsert of the same id); without, removed. Every worker serving the `maintenance` queue does
 * this at start, so the schedule follows the setting the workers run with. Returns when the next
 * run is due, when scheduled.
 */
export async function syncForgetSchedule(
  options: ForgetScheduleOptions,
  scheduled: boolean,
): Promise<Date | undefined> {
  const queue = new Queue(MAINTENANCE_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
  });
  try {
    if (!scheduled) {
      await queue.removeJobScheduler(FORGET_SCHEDULER_ID);
      return undefined;
    }
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
