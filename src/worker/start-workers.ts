import { Queue, Worker } from "bullmq";
import pLimit from "p-limit";
import type { CatalogSyncJobData, CatalogSyncJobResult } from "../../jobs/catalog/job.js";
import { type CatalogSyncDeps, createCatalogSyncProcessor } from "../../jobs/catalog/process.js";
import type { OrderJobData } from "../../jobs/orders/job.js";
import {
  createOrderCreateProcessor,
  type OrderEndName,
  type OrderOutcomeName,
  RateLimitBackoff,
} from "../../jobs/orders/process.js";
import { limiterFor } from "../../jobs/orders/rate-limit.js";
import { QUEUES } from "../../jobs/registry.js";
import type { ResponseInfo } from "../api/client.js";
import { apiClientFor } from "../api/client-for-config.js";
import type { Config } from "../config.js";
import { StartCancelled } from "../errors/start-cancelled.js";
import { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import { appendJournalLines, journalPath } from "../orders/journal.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import { OutageReporter, redisAddress } from "../redis/outage-reporter.js";
import { OrderIndex } from "../webhooks/order-index.js";
import { ProductGuard } from "../webhooks/product-guard.js";
import { CampaignTracker } from "./campaign-tracker.js";
import { Dispatcher, dispatchWindow } from "./dispatcher.js";
import type { OrderFollower } from "./order-follower.js";
import { startOrderStatusFollower } from "./order-follower.js";
import { ActiveJobs, closeBullWorkers, quitWithin, STOP_MS, settledWithin } from "./shutdown.js";

export type WorkerQueue = "orders" | "catalog";

/** Options of `startWorkers`. */
export interface StartWorkersOptions {
  /**
   * Gives up waiting for Redis to answer at start (SIGTERM before it came up): the start then
   * rejects with StartCancelled, and nothing was started.
   */
  signal?: AbortSignal;
  config: Config;
  log: Logger;
  /** @defaultValue ["orders", "catalog"] */
  queues?: WorkerQueue[];
  /**
   * Requests in flight at once per queue: orders being sent (the order worker holds a few more
   * jobs, see orderJobSlots), catalog syncs. @defaultValue 10
   */
  concurrency?: number;
  /** Keep payout (redemption) URLs in the ledger. @defaultValue false */
  storePayoutUrls?: boolean;
  /** Settings of the `catalog` queue's sync beyond the config's data dir and API version. */
  catalog?: Pick<CatalogSyncDeps, "retry" | "keep" | "pageSize" | "lockWaitMs" | "maxLockWaits">;
  /**
   * How long a job's lock lasts without renewal: a crashed worker's jobs are taken over after
   * about this long. @defaultValue 30000
   */
  lockDurationMs?: number;
  /** Told of order outcomes, campaign pauses and API requests (metrics). */
  hooks?: WorkerHooks;
  /**
   * Webhooks deliver order ends (GIFTJOBS_WEBHOOKS=1, `worker --webhooks`): accepted order ids
   * are indexed for the receiver, and polling, the safety net, starts later.
   */
  webhooks?: {
    /** Delay before the first poll of an accepted async order. @defaultValue 30000 */
    firstPollDelayMs?: number;
  };
  /**
   * Jobs in BullMQ that the running campaigns share.
   * @defaultValue dispatchWindow(the rate limit, the order job slots)
   */
  dispatchWindow?: number;
  /** Reports Redis outages; one of its own (to stderr) when not given. */
  outage?: OutageReporter;
  /** Timings, shortened by tests. */
  timings?: {
    /** How often the dispatcher looks at the campaigns when nothing wakes it. */
    dispatchTickMs?: number;
    /** How often the dispatcher looks for lost jobs. */
    dispatchRepairMs?: number;
    firstPollDelayMs?: number;
    pollDelayMs?: number;
    rateLimitBaseMs?: number;
    /** How often the campaign tracker reads the counts of the campaigns it logs. */
    trackerTickMs?: number;
    /** How often, at most, the campaign tracker logs a progress line. */
    trackerIntervalMs?: number;
  };
}

/** Optional observers of the order workers; none of them changes what the workers do. */
export interface WorkerHooks {
  /** Each attempt's outcome. */
  onOutcome?: (outcome: OrderOutcomeName) => void;
  /** Each order this process moved to an end, once (sync, async and lost jobs alike). */
  onOrderEnded?: (outcome: OrderEndName) => void;
  onCampaignPaused?: (campaign: string, reason: string) => void;
  onResponse?: (info: ResponseInfo) => void;
  /** The dispatcher's window (jobs of one campaign in BullMQ at once), told at start. */
  onDispatchWindow?: (size: number) => void;
}

export interface RunningWorkers {
  workers: Worker[];
  /** Stops taking jobs, lets the active ones finish (or be released), closes Redis. */
  close(): Promise<void>;
}

/**
 * Jobs the order worker holds at once for `concurrency` sending slots: a fifth more (at least
 * one), so that while a job records its answer and BullMQ finishes it and hands over the next
 * one (a few Redis round trips), another job already holds the slot it gave back and the
 * service still sees `concurrency` requests in flight (docs/architecture.md, "Sending slots").
 */
export function orderJobSlots(concurrency: number): number {
  return concurrency + Math.max(1, Math.ceil(concurrency / 5));
}

/** Starts the workers of the chosen queues under the configured prefix. */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, log } = options;
  const queues = options.queues ?? ["orders", "catalog"];
  const concurrency = options.concurrency ?? 10;
  // The ledger and BullMQ commands of all jobs in flight go out a turn at a time, not a write each.
  const connection = connectRedis(config, { forWorker: true, coalesceWrites: true });
  // Redis away is one line every few seconds, not an error per retry (docs/architecture.md).
  const outage = options.outage ?? new OutageReporter(redisAddress(config));
  outage.watch(connection);
  // A worker started before Redis is up waits for it (the PING waits: no retry limit here).
  await firstPing(connection, outage, options.signal, !options.outage);
  const workers: Worker[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  let follower: OrderFollower | undefined;
  let dispatcher: Dispatcher | undefined;
  let tracker: CampaignTracker | undefined;
  const hooks = options.hooks ?? {};
  const active = new ActiveJobs();

  if (queues.includes("orders")) {
    const client = apiClientFor(config, hooks.onResponse);
    const ledger = new Ledger(commandClient(connection), config.prefix);
    const ordersQueue = new Queue<OrderJobData>(QUEUES.orders, {
      connection,
      prefix: config.prefix,
    });
    ordersQueue.on("error", (error) => quietIfAway(outage, log, error, "orders queue error"));
    closers.push(() => ordersQueue.close());
    const timings = options.timings ?? {};
    const rateLimiter = new RateLimitBackoff(timings.rateLimitBaseMs ?? 5000);
    const orderIndex = options.webhooks
      ? new OrderIndex(commandClient(connection), config.prefix)
      : undefined;
    const firstPollDelayMs = options.webhooks
      ? (options.webhooks.firstPollDelayMs ?? 30_000)
      : timings.firstPollDelayMs;
    const campaigns = new CampaignTracker({
      ledger,
      log,
      tickMs: timings.trackerTickMs,
      intervalMs: timings.trackerIntervalMs,
    });
    tracker = campaigns;
    campaigns.start();
    // Taking over a stalled job is safe (same key), so stalls may repeat a few times.
    const lockDuration = options.lockDurationMs ?? 30_000;
    const common = {
      connection,
      prefix: config.prefix,
      concurrency,
      maxStalledCount: 10,
      lockDuration,
      stalledInterval: lockDuration,
    };
    const orderWorker = new Worker<OrderJobData>(
      QUEUES.orders,
      active.counted(
        createOrderCreateProcessor({
          client,
          ledger,
          log,
          ordersQueue,
          rateLimiter,
          journal: (campaign, line) =>
            appendJournalLines(journalPath(config.dataDir, campaign), [line]),
          storePayoutUrls: options.storePayoutUrls,
          firstPollDelayMs,
          orderIndex,
          productGuard: options.webhooks ? new ProductGuard(config.dataDir) : undefined,
          onOutcome: hooks.onOutcome,
          onOrderEnded: hooks.onOrderEnded,
          onCampaignPaused: (campaign, reason) => {
            campaigns.pausedHere(campaign, reason);
            hooks.onCampaignPaused?.(campaign, reason);
          },
          onSending: (campaign) => campaigns.touch(campaign),
          sending: pLimit(concurrency),
        }),
      ),
      // No maxStartedAttempts: it would also count the wake-ups of a paused campaign's jobs.
      // 429 loops are capped by the processor itself (OrderJobData.rateLimited).
      {
        ...common,
        concurrency: orderJobSlots(concurrency),
        limiter: limiterFor(config.orderRateLimitPerMinute),
      },
    );
    orderWorker.on(
      "failed",
      (job, error) => void markLostJob(ledger, log, job, error, hooks.onOrderEnded),
    );
    const window =
      options.dispatchWindow ??
      dispatchWindow(config.orderRateLimitPerMinute, orderJobSlots(concurrency));
    hooks.onDispatchWindow?.(window);
    dispatcher = new Dispatcher({
      ledger,
      queue: ordersQueue,
      log,
      outage,
      window,
      tickMs: timings.dispatchTickMs,
      repairMs: timings.dispatchRepairMs,
    });
    // A job that ends leaves room in its campaign's window.
    orderWorker.on("completed", () => dispatcher?.wake());
    dispatcher.start();
    follower = startOrderStatusFollower({
      client,
      ledger,
      log,
      concurrency,
      storePayoutUrls: options.storePayoutUrls,
      pollDelayMs: timings.pollDelayMs,
      onOrderEnded: hooks.onOrderEnded,
      orderIndex,
      outage,
    });
    workers.push(orderWorker);
  }
  if (queues.includes("catalog")) {
    const processor = createCatalogSyncProcessor({
      ...options.catalog,
      // The catalog sync's requests are counted like the order workers' ones.
      client: apiClientFor(config, hooks.onResponse),
      dataDir: config.dataDir,
      apiVersion: config.apiVersion,
      log,
    });
    workers.push(
      new Worker<CatalogSyncJobData, CatalogSyncJobResult>(
        QUEUES.catalog,
        active.counted(processor),
        {
          connection,
          prefix: config.prefix,
          concurrency: 1,
        },
      ),
    );
  }
  for (const worker of workers)
    worker.on("error", (error) => quietIfAway(outage, log, error, "worker error"));
  const close = async () => {
    // Bounded like the rest: a pass caught on a command to a cluster node that died would
    // hold the stop for ever; keys it moved are re-sent by another dispatcher's repair.
    await settledWithin(STOP_MS, async () => dispatcher?.close());
    await closeBullWorkers(workers, active, log);
    // After the order workers (which may still submit orders), before Redis closes. Bounded:
    // a command stuck on a cluster node that died must not keep a stopping worker alive, and
    // whatever is cut short here is repeated by another worker (a poll's lease runs out).
    await settledWithin(STOP_MS, async () => {
      await follower?.close();
      await tracker?.close();
      await Promise.all(closers.map((c) => c()));
    });
    await quitWithin(connection);
    outage.close();
  };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
  } catch (error) {
    // Not started (Redis unreachable, say): the dispatcher, follower and tracker already run;
    // stop them, or they would keep the process alive retrying.
    await close().catch(() => connection.disconnect());
    throw error;
  }
  return { workers, close };
}

/**
 * Waits for Redis's first answer, or for `signal`: then the connection is dropped (no more
 * reconnecting) and StartCancelled is thrown. The PING itself is left unanswered: a connection
 * dropped while it waits to reconnect does not fail the commands it holds.
 */
async function firstPing(
  connection: RedisConnection,
  outage: OutageReporter,
  signal: AbortSignal | undefined,
  ownOutage: boolean,
): Promise<void> {
  if (!signal) {
    await connection.ping();
    return;
  }
  let cancel = () => {};
  const cancelled = new Promise<never>((_, reject) => {
    cancel = () => {
      connection.disconnect();
      if (ownOutage) outage.close();
      reject(new StartCancelled());
    };
  });
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    await Promise.race([connection.ping(), cancelled]);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/**
 * Logs `error` unless it is Redis being away, which `outage` reports in its own lines, or a job
 * lock lost to a long outage, which is an info line.
 */
function quietIfAway(outage: OutageReporter, log: Logger, error: Error, what: string): void {
  if (outage.failed(error)) return;
  // After an outage longer than the lock duration, BullMQ finds a job's lock gone. Nothing to
  // do: the job is taken over as stalled and its order found past START (same key, no repeat).
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
 * could not be finished or delayed without it (`Missing lock for job X. moveToFinished`).
 */
const LOST_LOCK = /^(?:could not renew lock for job (\S+)|Missing lock for job (\S+)\. \w+)$/;

/**
 * Safety net: a job BullMQ failed for good without the processor recording it (stalled too
 * often, too many starts). Its rows must not stay queued forever: an order may exist.
 */
async function markLostJob(
  ledger: Ledger,
  log: Logger,
  job: { data: OrderJobData; attemptsMade: number; opts: { attempts?: number } } | undefined,
  error: Error,
  onOrderEnded?: (outcome: OrderEndName) => void,
): Promise<void> {
  if (!job) return;
  const finalFailure =
    job.attemptsMade >= (job.opts.attempts ?? 1) || error.name === "UnrecoverableError";
  if (!finalFailure) return;
  const moved = await ledger
    .transition(job.data.campaign, job.data.order, ["queued", "in_flight"], "failed_uncertain", {
      error_type: "job_failed",
      error_message: error.message,
    })
    .catch(() => ({ moved: false }));
  if (moved.moved) onOrderEnded?.("failed_uncertain");
  if (moved.moved)
    log.warn(
      { campaign: job.data.campaign, order: job.data.order },
      `job failed for good (${error.message}); rows failed_uncertain`,
    );
}
