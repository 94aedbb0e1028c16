import { getNextMillis, Queue } from "bullmq";
import { RunError } from "../../src/errors/run-error.js";
import { UserError } from "../../src/errors/user-error.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { redisKey } from "../../src/redis/redis-key.js";
import { LockTimeoutError, withRedisLock } from "../../src/redis/redis-lock.js";
import { QUEUES } from "../registry.js";
import { CATALOG_JOB_OPTIONS, DEFAULT_CATALOG_CRON } from "./job.js";

/** Id of the one job scheduler of the nightly catalog sync. */
const CATALOG_SCHEDULER_ID = "catalog-sync-nightly";
/**
 * Name of catalog-sync jobs (scheduled or added by hand).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const CATALOG_SYNC_JOB_NAME = "catalog-sync";

export interface CatalogScheduleOptions {
  /** A connection BullMQ may share (it is not closed here). */
  connection: RedisConnection;
  /** Redis key prefix (config.prefix). */
  prefix: string;
  /** Five- or six-field cron expression. @defaultValue "0 2 * * *" */
  cron?: string;
  /** IANA time zone of the cron expression. @defaultValue UTC */
  tz?: string;
  /** Data of each scheduled job (filters of the sync). @defaultValue `{}` */
  data?: Record<string, unknown>;
}

export interface CatalogSchedule {
  id: string;
  cron: string;
  tz: string;
  /** When the next sync is due, if BullMQ could tell. */
  next: Date | undefined;
}

/** Throws a UserError naming `--tz` unless `tz` is a time zone this runtime knows. */
function validateTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw new UserError(
      `--tz: ${JSON.stringify(tz)} is not a known time zone (e.g. Europe/London)`,
    );
  }
}

/** Throws a UserError naming `--cron` unless BullMQ can compute a next run from it. */
function validateCron(cron: string, tz: string): number {
  const fields = cron.trim().split(/\s+/);
  let next: number | undefined;
  try {
    if (fields.length < 5 || fields.length > 6) throw new Error("wrong number of fields");
    next = getNextMillis(Date.now(), { pattern: cron, tz });
  } catch {
    next = undefined;
  }
  if (next === undefined || Number.isNaN(next)) {
    throw new UserError(
      `--cron: ${JSON.stringify(cron)} is not a valid cron expression (e.g. "0 2 * * *": 02:00 daily)`,
    );
  }
  return next;
}

function schedulerLockKey(prefix: string): string {
  return redisKey(prefix, "lock", "catalog-scheduler");
}

async function withQueue<T>(
  options: Pick<CatalogScheduleOptions, "connection" | "prefix">,
  fn: (queue: Queue) => Promise<T>,
): Promise<T> {
  const queue = new Queue(QUEUES.catalog, {
    connection: options.connection,
    prefix: options.prefix,
  });
  try {
    return await fn(queue);
  } finally {
    await queue.close();
  }
}

/**
 * Under a Redis lock: concurrent upserts of one scheduler have been seen to leave two pending
 * jobs in BullMQ, and the lock makes "register from anywhere, any number of times" safe.
 */
async function underSchedulerLock<T>(
  options: Pick<CatalogScheduleOptions, "connection" | "prefix">,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await withRedisLock(options.connection, schedulerLockKey(options.prefix), fn);
  } catch (error) {
    if (error instanceof LockTimeoutError) {
      throw new RunError("another process is changing the catalog schedule; try again");
    }
    throw error;
  }
}

/**
 * Registers (or updates) the nightly catalog-sync job scheduler on the `catalog` queue. Any
 * number of calls, concurrent or not, leave one scheduler and one pending job.
 */
export async function scheduleCatalogSync(
  options: CatalogScheduleOptions,
): Promise<CatalogSchedule> {
  const cron = (options.cron ?? DEFAULT_CATALOG_CRON).trim();
  const tz = options.tz ?? "UTC";
  validateTimeZone(tz);
  validateCron(cron, tz);
  return underSchedulerLock(options, () =>
    withQueue(options, async (queue) => {
      await queue.upsertJobScheduler(
        CATALOG_SCHEDULER_ID,
        { pattern: cron, tz },
        { name: CATALOG_SYNC_JOB_NAME, data: options.data ?? {}, opts: CATALOG_JOB_OPTIONS },
      );
      const scheduler = await queue.getJobScheduler(CATALOG_SCHEDULER_ID);
      const next = scheduler?.next ? new Date(scheduler.next) : undefined;
      return { id: CATALOG_SCHEDULER_ID, cron, tz, next };
    }),
  );
}

/** Removes the catalog job scheduler and its pending job. Resolves false when there was none. */
export async function unscheduleCatalogSync(
  options: Pick<CatalogScheduleOptions, "connection" | "prefix">,
): Promise<boolean> {
  return underSchedulerLock(options, () =>
    withQueue(options, (queue) => queue.removeJobScheduler(CATALOG_SCHEDULER_ID)),
  );
}

/**
 * The registered catalog scheduler, if any.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export async function getCatalogSchedule(
  options: Pick<CatalogScheduleOptions, "connection" | "prefix">,
): Promise<CatalogSchedule | undefined> {
  return withQueue(options, async (queue) => {
    const scheduler = await queue.getJobScheduler(CATALOG_SCHEDULER_ID);
    if (!scheduler) return undefined;
    return {
      id: CATALOG_SCHEDULER_ID,
      cron: scheduler.pattern ?? "",
      tz: scheduler.tz ?? "UTC",
      next: scheduler.next ? new Date(scheduler.next) : undefined,
    };
  });
}
