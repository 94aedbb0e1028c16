import type { Worker } from "bullmq";
import type { CatalogSyncDeps } from "../../jobs/catalog/process.js";
import type { OrderEndName, OrderOutcomeName } from "../../jobs/orders/attempt.js";
import type { QUEUES } from "../../jobs/registry.js";
import type { ResponseInfo } from "../api/client.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import type { OutageReporter } from "../redis/outage-reporter.js";

/** The queues a worker process can run: those of jobs/registry.ts. */
export type WorkerQueue = keyof typeof QUEUES;

/** Options of `startWorkers`. */
export interface StartWorkersOptions {
  /**
   * Gives up waiting for Redis to answer at start (SIGTERM before it came up): the start then
   * rejects with StartCancelled, and nothing was started.
   */
  signal?: AbortSignal;
  config: Config;
  log: Logger;
  /** @defaultValue ["orders", "catalog", "maintenance"] */
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
    /**
     * The longest wait between status polls of an accepted order, and the wait after a poll that
     * reached nothing (the service away). @defaultValue 30000
     */
    maxPollDelayMs?: number;
    rateLimitBaseMs?: number;
    /** How often the campaign tracker reads the counts of the campaigns it logs. */
    trackerTickMs?: number;
    /** How often, at most, the campaign tracker logs a progress line. */
    trackerIntervalMs?: number;
    /** How often this worker writes its heartbeat. @defaultValue 10000 */
    heartbeatMs?: number;
    /**
     * How long a heartbeat keeps this worker alive: a worker killed without a stop counts as
     * gone after this (no_worker). @defaultValue 30000
     */
    heartbeatTtlMs?: number;
    /**
     * Failures with no answer between, this long, before "cannot reach the service".
     * @defaultValue 5000
     */
    serviceQuietMs?: number;
    /** While the service cannot be reached, a line (and marks) this often. @defaultValue 30000 */
    serviceLineMs?: number;
    /**
     * The first hold of the orders queue after a request with no answer; it doubles while they
     * repeat. @defaultValue 1000
     */
    outageHoldMs?: number;
    /** The longest hold of the orders queue while the service is away. @defaultValue 30000 */
    outageHoldMaxMs?: number;
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
