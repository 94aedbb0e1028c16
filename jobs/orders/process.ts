import { type Job, type Queue, Worker } from "bullmq";
import type { LimitFunction } from "p-limit";
import pRetry from "p-retry";
import type { ApiClient, CreateOrderResult } from "../../src/api/client.js";
import {
  ApiError,
  ApiVersionError,
  answeredUnderKey,
  RefusedRequestError,
  ValidationError,
} from "../../src/api/errors/index.js";
import type { ExecutionMode, OrderRequest } from "../../src/api/order-request.js";
import type { Order } from "../../src/api/schemas.js";
import type { KeyWord, Ledger, OrderPatch } from "../../src/ledger/ledger.js";
import type { Logger } from "../../src/log.js";
import type { JournalLine } from "../../src/orders/journal.js";
import { orderKey } from "../../src/orders/keys.js";
import { completedPatch, failedItemIndex, warnReplayed } from "../../src/orders/outcome.js";
import { requestFromLedger } from "../../src/orders/request.js";
import type { OrderIndex } from "../../src/webhooks/order-index.js";
import { holdIfProductStopped, type ProductGuard } from "../../src/webhooks/product-guard.js";
import type { OrderJobData } from "./job.js";

/** What the order processor needs. */
export interface CreateOrderDeps {
  client: ApiClient;
  ledger: Ledger;
  log: Logger;
  /** Where the next generation's order goes when a 422 names one item of several. */
  ordersQueue: Queue<OrderJobData>;
  /** Shared with the worker: how long to hold the whole queue after a 429. */
  rateLimiter: RateLimitBackoff;
  /**
   * Appends a generation change to the campaign's order journal, flushed, before the new key
   * can be sent (docs/architecture.md, "One key while an order may exist").
   */
  journal: (campaign: string, line: JournalLine) => Promise<void>;
  /** Keep redemption links in the ledger. @defaultValue false */
  storePayoutUrls?: boolean;
  /** Short in-attempt retries for blips (same key). @defaultValue 1 */
  blipRetries?: number;
  /** Delay before the first poll of an async order. @defaultValue 1000 */
  firstPollDelayMs?: number;
  /** With webhooks on: accepted order ids, for the receiver (docs/architecture.md, "Webhooks"). */
  orderIndex?: OrderIndex;
  /** With webhooks on: products the service said went out of order (product.update). */
  productGuard?: ProductGuard;
  /** Told of each attempt's outcome (metrics). */
  onOutcome?: (outcome: OrderOutcomeName) => void;
  /** Told once per order this worker moved to an end (metrics: giftjobs_orders_total). */
  onOrderEnded?: (outcome: OrderEndName) => void;
  /** Told when this worker paused a campaign, and why (metrics, the campaign tracker). */
  onCampaignPaused?: (campaign: string, reason: string) => void;
  /** Told before each order this worker sends (the campaign tracker). */
  onSending?: (campaign: string) => void;
  /**
   * The worker's sending slots: at most this many orders between the ledger's start and the
   * service's answer (the worker's --concurrency). Without it, each job is its own slot.
   */
  sending?: LimitFunction;
}

/** The ends of an order, as giftjobs_orders_total labels them. */
export type OrderEndName = "completed" | "failed_final" | "failed_uncertain" | "cancelled";

/**
 * The outcomes of docs/architecture.md, "Outcomes", per attempt, as metrics label them. A 429
 * is not one: it uses no attempt (it is counted as giftjobs_http_requests_total{status="429"}).
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
 * Backoff after 429s: at least 5 s, doubling while they repeat, reset by a success.
 * One instance per worker process; BullMQ applies the wait queue-wide.
 */
export class RateLimitBackoff {
  private streak = 0;
  constructor(
    private readonly baseMs = 5000,
    private readonly maxMs = 60_000,
  ) {}
  next(): number {
    this.streak += 1;
    return Math.min(this.baseMs * 2 ** (this.streak - 1), this.maxMs);
  }
  reset(): void {
    this.streak = 0;
  }
}

/**
 * One attempt at an order: the job, and what the ledger holds for it (key, rows, generation,
 * and the body made of them). The body comes from the ledger, never from the job, so every
 * attempt under a key sends the body recorded at import.
 */
interface Attempt {
  job: Job<OrderJobData>;
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

/** What the part of a job that holds a sending slot ends with. */
type Sent =
  | { kind: "over"; result: CreateOrderJobResult }
  | { kind: "answered"; attempt: Attempt; result: CreateOrderResult }
  | { kind: "failed"; attempt: Attempt; error: unknown };

/**
 * Processes one `orders` job: POST /v2/order under the job's key, then records the outcome.
 * Each outcome (docs/architecture.md, "Outcomes") is handled in its own function below.
 * From the ledger's start to the service's answer the job holds one of `deps.sending`'s slots;
 * recording the answer and BullMQ's own bookkeeping happen after it is given back, so they
 * overlap the next job's request (docs/architecture.md, "Sending slots").
 */
export async function processCreateOrder(
  job: Job<OrderJobData>,
  signal: AbortSignal | undefined,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  const send = () => startAndSend(job, signal, deps);
  const sent = await (deps.sending ? deps.sending(send) : send());
  if (sent.kind === "over") return sent.result;
  if (sent.kind === "failed") return handleFailure(sent.attempt, sent.error, deps);
  deps.rateLimiter.reset();
  if (sent.result.kind === "completed")
    return recordCompleted(sent.attempt, sent.result.order, deps);
  return recordSubmitted(sent.attempt, sent.result.order.id, deps);
}

/**
 * Starts the order in the ledger (in_flight) and sends it. The start is inside the slot, just
 * before the request: an order waiting for a slot is still queued, so a pause or cancel that
 * comes meanwhile stops it.
 */
async function startAndSend(
  job: Job<OrderJobData>,
  signal: AbortSignal | undefined,
  deps: CreateOrderDeps,
): Promise<Sent> {
  const { campaign, order: number } = job.data;
  let log = deps.log.child({ campaign, order: number, job: job.id });

  const start = await deps.ledger.start(
    campaign,
    number,
    { attempts: job.attemptsMade + 1 },
    deps.client.keyFingerprint,
  );
  // Held or paused: the ledger put the order back on its pending list; this job is over.
  if (start.kind === "paused") {
    if (start.budget) {
      deps.onCampaignPaused?.(campaign, start.reason);
      log.error(
        `campaign ${campaign} paused: ${start.reason}. Nothing more of it is sent until the budget is raised (import the file again with a higher --budget), then: giftjobs orders resume --campaign ${campaign}`,
      );
    }
    return { kind: "over", result: { status: "queued", skipped: true } };
  }
  if (start.kind === "past")
    return { kind: "over", result: await alreadyHandled(job, start.status, deps) };
  if (start.kind === "other-api-key") {
    deps.onOrderEnded?.("failed_uncertain");
    log.warn(
      { unclear: start.mark },
      "an earlier attempt under this key ended unclear under another API key, which the service may not replay under this one: nothing was sent, rows failed_uncertain (check the service's orders; see orders retry)",
    );
    return { kind: "over", result: { status: "failed_uncertain" } };
  }
  const { order } = start;
  const key = order.key;
  log = log.child({ key });
  let request: OrderRequest;
  try {
    request = requestFromLedger(order, start.rows);
  } catch (error) {
    const message = `the ledger cannot make this order's body (${(error as Error).message}); nothing was sent`;
    const moved = await deps.ledger.transition(campaign, number, ["in_flight"], "failed_final", {
      error_type: "no_request",
      error_message: message,
    });
    const status = moved.moved ? moved.status : "failed_final";
    if (moved.moved) deps.onOrderEnded?.(endName(status));
    log.error(`${message}: rows ${status}`);
    return { kind: "over", result: { status } };
  }
  const held = { campaign, number, request, log };
  if (await holdIfProductStopped(deps.productGuard, deps.ledger, held, deps.onCampaignPaused))
    return { kind: "over", result: { status: "queued", skipped: true } };
  deps.onSending?.(campaign);
  const attempt: Attempt = {
    job,
    campaign,
    number,
    key,
    identities: order.identities,
    generation: order.generation,
    request,
    mode: order.mode ?? job.data.executionMode ?? "async",
    campaignCreatedAt: start.campaignCreatedAt,
    log,
  };
  try {
    return { kind: "answered", attempt, result: await sendOrder(attempt, signal, deps) };
  } catch (error) {
    return { kind: "failed", attempt, error };
  }
}

/** A sync order (or an async one the service finished at once): completed with its ids. */
async function recordCompleted(
  attempt: Attempt,
  order: Order,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  const { campaign, number, log } = attempt;
  const store = deps.storePayoutUrls ?? false;
  const patch = completedPatch(order, attempt.identities.length, store, attempt.campaignCreatedAt);
  const moved = await deps.ledger.transition(
    campaign,
    number,
    ["in_flight"],
    "completed",
    patch,
    undefined,
    "answered",
  );
  deps.onOutcome?.("completed");
  if (moved.moved) deps.onOrderEnded?.("completed");
  if (patch.replayed) warnReplayed(log, campaign, order.created_at);
  else log.debug({ order_id: order.id }, "order completed");
  return { status: "completed", order_id: order.id };
}

/** An async order accepted: submitted, and followed (by webhooks, and polls as the net). */
async function recordSubmitted(
  attempt: Attempt,
  orderId: string,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  const { campaign, number, log } = attempt;
  // Indexed before `submitted`: a webhook that comes first finds the order and is asked to come
  // again. Both go in one write, in this order, on one connection (with a Cluster, to the node
  // of the prefix's one slot), so Redis runs them in this order without a round trip between.
  const indexed = deps.orderIndex?.remember(orderId, campaign, number);
  // Submitted and followed in one step: the OrderFollower reads its status from then on.
  const submitted = deps.ledger.transition(
    campaign,
    number,
    ["in_flight"],
    "submitted",
    { order_id: orderId },
    { at: Date.now() + (deps.firstPollDelayMs ?? 1000) },
    "answered",
  );
  await Promise.all([indexed, submitted]);
  deps.onOutcome?.("submitted");
  log.debug({ order_id: orderId }, "order submitted; following its status");
  return { status: "submitted", order_id: orderId };
}

/** Sends the order; short blips (same key, always) are retried once inside the attempt. */
function sendOrder(attempt: Attempt, signal: AbortSignal | undefined, deps: CreateOrderDeps) {
  const send = async () => {
    try {
      return await deps.client.createOrder(attempt.request, {
        idempotencyKey: attempt.key,
        executionMode: attempt.mode,
        signal,
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) attempt.unclear ??= error.type;
      throw error;
    }
  };
  return pRetry(send, {
    retries: deps.blipRetries ?? 1,
    minTimeout: 200,
    maxTimeout: 1000,
    signal,
    // Only transport blips: 5xx and in-progress go back to BullMQ's backoff, 429 to the limiter.
    shouldRetry: ({ error }) => error instanceof ApiError && error.status === 0 && !signal?.aborted,
  });
}

/**
 * The ledger says this order is past queued/in_flight: a re-added or stalled job. Nothing is
 * sent again. A submitted order is followed again if it somehow is not (follow is idempotent).
 */
async function alreadyHandled(
  job: Job<OrderJobData>,
  current: string | null,
  deps: CreateOrderDeps,
) {
  if (current === "submitted")
    await deps.ledger.follow(job.data.campaign, job.data.order, Date.now());
  return { status: current ?? "unknown", skipped: true };
}

async function handleFailure(
  attempt: Attempt,
  error: unknown,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  // A blip before the last answer may have reached the service: the order is marked before the
  // outcome is recorded (an answer under the key, if this is one, then removes the mark again).
  if (attempt.unclear)
    await deps.ledger.transition(attempt.campaign, attempt.number, ["in_flight"], "in_flight", {
      unclear: attempt.unclear,
    });
  if (error instanceof RefusedRequestError) {
    // Nothing was sent; an earlier attempt's mark, if any, keeps the rows failed_uncertain.
    const status = await markFailed(
      attempt,
      deps,
      "failed_final",
      "refused_by_client",
      error.message,
    );
    deps.onOutcome?.("final");
    return { status };
  }
  if (!(error instanceof ApiError)) {
    // Not an answer from the service (a bug, Redis trouble, the worker stopping mid-request):
    // the request may have reached the service, so the key is marked; BullMQ retries it.
    await deps.ledger.transition(attempt.campaign, attempt.number, ["in_flight"], "queued", {
      unclear: "interrupted",
    });
    throw error;
  }
  switch (error.outcome) {
    case "rate-limited":
      return rateLimited(attempt, error, deps);
    case "systemic":
      return pauseCampaign(attempt, error, deps);
    case "final":
      return finalFailure(attempt, error, deps);
    case "key-conflict":
      // The key exists with another body: an order may exist under it. Never retried.
      await markFailed(attempt, deps, "failed_uncertain", error.type, error.message, {
        unclear: error.type,
      });
      deps.onOutcome?.("key_conflict");
      attempt.log.error({ type: error.type }, "idempotency key conflict: rows failed, not retried");
      return { status: "failed_uncertain" };
    default:
      return retrySameKey(attempt, error, deps);
  }
}

/**
 * Ends the attempt's order failed. `word` "answered" when the service answered under the key;
 * otherwise a failed_final becomes failed_uncertain while an earlier attempt's mark stands (the
 * ledger decides, atomically). Returns the status reached.
 */
async function markFailed(
  attempt: Attempt,
  deps: CreateOrderDeps,
  status: "failed_final" | "failed_uncertain",
  type: string,
  message: string,
  options: { word?: KeyWord; unclear?: string } = {},
): Promise<string> {
  const moved = await deps.ledger.transition(
    attempt.campaign,
    attempt.number,
    ["in_flight", "queued"],
    status,
    { error_type: type, error_message: message, unclear: options.unclear },
    undefined,
    options.word,
  );
  if (!moved.moved) return moved.current ?? status;
  deps.onOrderEnded?.(endName(moved.status));
  return moved.status;
}

/** The metrics name of an end status. */
function endName(status: string): OrderEndName {
  return status === "failed_final" || status === "cancelled" || status === "completed"
    ? status
    : "failed_uncertain";
}

/** 5xx, network, timeout, in-progress: the SAME key again after BullMQ's backoff, or uncertain at the end. */
async function retrySameKey(attempt: Attempt, error: ApiError, deps: CreateOrderDeps) {
  const { job, log } = attempt;
  // Counted as what the service's answer was, whether or not attempts remain.
  deps.onOutcome?.("retry_same_key");
  const attempts = job.opts.attempts ?? 1;
  if (job.attemptsMade + 1 >= attempts) {
    await markFailed(attempt, deps, "failed_uncertain", error.type, error.message, {
      unclear: error.type,
    });
    log.warn(
      { type: error.type, attempts },
      "attempts used up; an order may exist: rows failed_uncertain",
    );
    return { status: "failed_uncertain" };
  }
  await deps.ledger.transition(attempt.campaign, attempt.number, ["in_flight"], "queued", {
    error_type: error.type,
    error_message: error.message,
    unclear: error.type,
  });
  // Retried: not a problem yet (the tracker's progress lines count what ends failed).
  log.debug(
    { type: error.type, attempt: job.attemptsMade + 1 },
    "ambiguous outcome; will retry with the same key",
  );
  throw error;
}

/** After this many 429s one job's further 429s use attempts, so nothing loops forever. */
export const MAX_RATE_LIMITED = 100;

/** 429: hold the queue (queue-wide), put the job back to waiting without using an attempt. */
async function rateLimited(
  attempt: Attempt,
  error: ApiError,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  const { job, log } = attempt;
  const count = (job.data.rateLimited ?? 0) + 1;
  if (count > MAX_RATE_LIMITED) return retrySameKey(attempt, error, deps);
  await job.updateData({ ...job.data, rateLimited: count });
  await deps.ledger.transition(attempt.campaign, attempt.number, ["in_flight"], "queued");
  const waitMs = deps.rateLimiter.next();
  // Every job in flight may get one: a debug line each (the metric counts them).
  log.debug({ wait_ms: waitMs }, "rate limited by the service (429); holding the queue");
  await deps.ordersQueue.rateLimit(waitMs);
  throw Worker.RateLimitError();
}

/**
 * 401/403, a removed API version, insufficient funds, ordering restricted: pause the campaign.
 * A refusal given before the service read the key (401, 403, the version errors) recorded
 * nothing under it and says nothing of an earlier attempt: the rows keep their key and go back
 * to the pending list, sent after resume. One given after (funds, spending limit) is recorded
 * under the key and would be replayed forever, and it is the key's last word (an order made
 * earlier would have been replayed instead): the rows move to the next generation's key now
 * (docs/architecture.md, "One key while an order may exist").
 */
async function pauseCampaign(
  attempt: Attempt,
  error: ApiError,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  const { campaign, log } = attempt;
  const reason = `${error.type}: ${error.message}`;
  deps.onOutcome?.("systemic");
  if (await deps.ledger.pause(campaign, reason)) {
    deps.onCampaignPaused?.(campaign, reason);
    log.error(
      { type: error.type },
      `campaign ${campaign} paused: ${reason}. ${fixFor(error)}, then: giftjobs orders resume --campaign ${campaign}`,
    );
  }
  if (answeredUnderKey(error)) {
    // The next generation waits on the pending list; the dispatcher sends it after resume.
    await nextGeneration(attempt, attempt.identities, deps, {});
  } else {
    // No error on the order: the pause's reason says it, and a queued order's error type is
    // read as the mark of an unclear attempt by the ledger (from before the mark had a field).
    await deps.ledger.transition(campaign, attempt.number, ["in_flight"], "queued", {}, "pending");
  }
  return { status: "queued" };
}

/** What the operator fixes before resuming a campaign a systemic refusal paused. */
function fixFor(error: ApiError): string {
  if (error.type === "insufficient_funds") return "Top up the account's balance";
  if (error.type === "ordering_restricted") return "Raise the account's spending limit";
  if (error instanceof ApiVersionError)
    return "Set GIFTJOBS_API_VERSION and GIFTJOBS_API_URL right";
  return "Check GIFTJOBS_API_KEY (and the key's permissions)";
}

/**
 * Other 4xx: nothing was made. A 422 naming one item of several fails that row only; the
 * others go at once under the next generation's key (a new key, since the body changes).
 */
async function finalFailure(attempt: Attempt, error: ApiError, deps: CreateOrderDeps) {
  const { identities, log } = attempt;
  const index = error instanceof ValidationError ? failedItemIndex(error.details) : undefined;
  deps.onOutcome?.("final");
  const word = answeredUnderKey(error) ? "answered" : undefined;
  if (index === undefined || identities.length < 2 || index >= identities.length || !word) {
    const status = await markFailed(attempt, deps, "failed_final", error.type, error.message, {
      word,
    });
    // One per order: counted in the tracker's progress lines and `orders report`.
    log.debug(
      { type: error.type, status },
      "order refused by the service; rows failed_final (nothing was made) unless an earlier attempt ended unclear",
    );
    return { status };
  }
  const rest = identities.filter((_, i) => i !== index);
  const newKey = await nextGeneration(attempt, rest, deps, {
    restPatch: { error_type: error.type, error_message: error.message },
  });
  log.debug(
    { type: error.type, item: index, next_key: newKey },
    "one item refused; the others re-sent under the next generation",
  );
  return { status: "failed_final" };
}

/**
 * Moves `identities` (all or some rows of the attempt's order) to a new order under the next
 * generation's key, at the front of the campaign's pending list (the rekey script puts it
 * there; the dispatcher sends it), in one script. Only after the service answered this attempt
 * under the old key (the script refuses otherwise while the order carries the mark of an
 * unclear attempt). The new order is journaled first, flushed: a re-import after a lost ledger
 * rebuilds it. Its body is made of the rows it takes (and the old order's description and
 * metadata). Rows left behind become failed_final with `restPatch`.
 */
async function nextGeneration(
  attempt: Attempt,
  identities: string[],
  deps: CreateOrderDeps,
  options: { restPatch?: OrderPatch },
): Promise<string> {
  const generation = attempt.generation + 1;
  const newKey = orderKey(attempt.campaign, generation, identities);
  const a = deps.client.keyFingerprint;
  const i = [...identities].sort();
  await deps.journal(
    attempt.campaign,
    a ? { g: generation, k: newKey, i, a } : { g: generation, k: newKey, i },
  );
  const done = await deps.ledger.rekey(attempt.campaign, {
    number: attempt.number,
    key: newKey,
    identities,
    generation,
    from: ["in_flight"],
    restStatus: "failed_final",
    restPatch: options.restPatch,
    word: "answered",
  });
  if (!done.done)
    attempt.log.warn({ why: done.why }, "the rows were not moved to the next generation");
  return newKey;
}

/**
 * The processor of `order-create` jobs on the `orders` queue: POST /v2/order under the job's
 * key and the outcome recorded in the ledger (docs/architecture.md, "Outcomes"). The job's
 * AbortSignal cancels the request when the worker shuts down.
 */
export function createOrderCreateProcessor(
  deps: CreateOrderDeps,
): (job: Job<OrderJobData>, token?: string, signal?: AbortSignal) => Promise<CreateOrderJobResult> {
  return (job, _token, signal) => processCreateOrder(job, signal, deps);
}
