import type { Job, Queue } from "bullmq";
import type { LimitFunction } from "p-limit";
import type { ApiClient } from "../../src/api/client.js";
import type { ExecutionMode, OrderRequest } from "../../src/api/order-request.js";
import type { DailyLimit } from "../../src/daily-limit.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Logger } from "../../src/log.js";
import type { JournalLine } from "../../src/orders/journal.js";
import type { OrderIndex } from "../../src/webhooks/order-index.js";
import type { ProductGuard } from "../../src/webhooks/product-guard.js";
import type { OrderJobData } from "./job.js";
import type { OutageHold } from "./outage.js";
import type { RateLimitBackoff } from "./rate-limit.js";

/**
 * What the order processor needs, by role: each step and each failure handler takes the groups
 * it uses (`Pick<CreateOrderDeps, ...>`), not the whole. Defaults are the caller's
 * (src/worker/orders-queue.ts, from src/worker-defaults.ts): none is filled in here.
 */
export interface CreateOrderDeps {
  /** The ledger: the order's record, the campaign's state. */
  ledger: Ledger;
  /** Where a new key is written before it can be sent. */
  journal: NewKeyJournal;
  /** The service, and how an order is sent to it. */
  service: OrderService;
  /** The `orders` queue and its holds (429, outages). */
  queue: QueueHolds;
  /** What may stop an order before it is sent. */
  limits: OrderLimits;
  /** How an answer is recorded. */
  recording: Recording;
  /** Told of what happened (metrics, the campaign tracker, the service watch). */
  observers: OrderObservers;
  log: Logger;
}

/**
 * The campaign's order journal, for generation changes: `append` is flushed before the new key
 * can be sent (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist").
 */
interface NewKeyJournal {
  append: (campaign: string, line: JournalLine) => Promise<void>;
  /**
   * Takes back a line `append` wrote whose REKEY then refused: nothing sent its key
   * (OrderJournal.voidChange). Without it the line stays.
   */
  void?: (campaign: string, line: JournalLine) => Promise<void>;
}

export interface OrderService {
  client: ApiClient;
  /** Short in-attempt retries for blips (same key). */
  blipRetries: number;
  /**
   * The worker's sending slots: at most this many orders between the ledger's start and the
   * service's answer (the worker's --concurrency). Without it, each job is its own slot.
   */
  slots?: LimitFunction;
}

interface QueueHolds {
  /** Where a job goes back, and the queue-wide hold (BullMQ's rate limit). */
  ordersQueue: Queue<OrderJobData>;
  /** Shared with the worker: how long to hold the whole queue after a 429. */
  rateLimiter: RateLimitBackoff;
  /**
   * Shared with the worker: how long to hold the queue while the service does not answer, and
   * whether it is known down (docs/architecture/sending-orders.md, "Service outages"). Without
   * it, only requests that were never sent are put back (holding the queue 1 s).
   */
  outageHold?: OutageHold;
}

interface OrderLimits {
  /**
   * GIFTJOBS_DAILY_LIMIT and GIFTJOBS_LIMIT_TZ: each order's price counts in the day's spend of
   * its currency, and is held against its limit if it has one (docs/architecture/ledger.md, "The
   * daily limit"). None: counted in UTC days, no limit.
   */
  dailyLimit?: DailyLimit;
  /** With webhooks on: products the service said went out of order (product.update). */
  productGuard?: ProductGuard;
}

interface Recording {
  /** Keep redemption links in the ledger. */
  storePayoutUrls: boolean;
  /** Delay before the first poll of an async order. */
  firstPollDelayMs: number;
  /**
   * With webhooks on: accepted order ids, for the receiver (docs/architecture/webhooks.md,
   * "Webhooks").
   */
  orderIndex?: OrderIndex;
}

interface OrderObservers {
  /** Told of each job of `campaign` put back unsent while the service is known down. */
  onHeld?: (campaign: string) => void;
  /** Told of each attempt's outcome (metrics). */
  onOutcome?: (outcome: OrderOutcomeName) => void;
  /** Told once per order this worker moved to an end (metrics: giftjobs_orders_total). */
  onOrderEnded?: (outcome: OrderEndName) => void;
  /** Told when this worker paused a campaign, and why (metrics, the campaign tracker). */
  onCampaignPaused?: (campaign: string, reason: string) => void;
  /** Told before each order this worker sends (the campaign tracker). */
  onSending?: (campaign: string) => void;
  /**
   * Told how each order request ended: `error` undefined when the service answered (whether or
   * not it made the order), else what the request failed with (the worker's ServiceWatch).
   */
  onRequestEnded?: (campaign: string, error?: unknown) => void;
}

/** The ends of an order, as giftjobs_orders_total labels them. */
export type OrderEndName = "completed" | "failed_final" | "failed_uncertain" | "cancelled";

/**
 * The outcomes of docs/architecture/sending-orders.md, "Outcomes", per attempt, as metrics label
 * them. A 429 is not one: it uses no attempt (it is counted as
 * giftjobs_http_requests_total{status="429"}).
 */
export type OrderOutcomeName =
  | "completed"
  | "submitted"
  | "retry_same_key"
  | "systemic"
  | "final"
  | "key_conflict";

/** Result recorded on the job, for the dashboard. */
export type CreateOrderJobResult = { status: string; order_id?: string; skipped?: boolean };

/**
 * One attempt at an order: the job, and what the ledger holds for it (key, rows, generation,
 * and the body made of them). The body comes from the ledger, never from the job, so every
 * attempt under a key sends the body recorded at import.
 */
export interface Attempt {
  job: Job<OrderJobData>;
  /** The job's lock token (to put it back without using an attempt). */
  token?: string;
  campaign: string;
  /** The order's number in its campaign. */
  number: number;
  /** Its idempotency key. */
  key: string;
  identities: string[];
  generation: number;
  request: OrderRequest;
  mode: ExecutionMode;
  campaignCreatedAt: string | undefined;
  log: Logger;
  /**
   * The error type of a blip retried inside this attempt (a timeout, a dropped connection): the
   * request may have reached the service, whatever the attempt's last answer was.
   */
  unclear?: string;
}

/** The metrics name of an end status. */
export function endName(status: string): OrderEndName {
  return status === "failed_final" || status === "cancelled" || status === "completed"
    ? status
    : "failed_uncertain";
}
