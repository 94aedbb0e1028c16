import type { Job } from "bullmq";
import pRetry from "p-retry";
import type { CreateOrderResult } from "../../src/api/client.js";
import { ApiError, nothingSent } from "../../src/api/errors/index.js";
import type { OrderRequest } from "../../src/api/order-request.js";
import type { Order } from "../../src/api/schemas.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { StartResult } from "../../src/ledger/types.js";
import type { Logger } from "../../src/log.js";
import { completedPatch, warnReplayed } from "../../src/orders/outcome.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { holdIfProductStopped } from "../../src/webhooks/product-guard.js";
import {
  type Attempt,
  type CreateOrderDeps,
  type CreateOrderJobResult,
  endName,
  type OrderService,
} from "./attempt.js";
import { pauseAtDailyLimit } from "./daily-limit-pause.js";
import { handleFailure } from "./failures.js";
import type { OrderJobData } from "./job.js";
import { noAnswer, putBack } from "./outage.js";

/** What the part of a job that holds a sending slot ends with. */
type Sent =
  | { kind: "over"; result: CreateOrderJobResult }
  | { kind: "answered"; attempt: Attempt; result: CreateOrderResult }
  | { kind: "failed"; attempt: Attempt; error: unknown };

/** What BullMQ hands a processor beside the job. */
interface JobRun {
  /** Cancels the request when the worker shuts down. */
  signal?: AbortSignal;
  /** The job's lock token (to put it back without using an attempt). */
  token?: string;
}

/**
 * Processes one `orders` job: POST /v2/order under the job's key, then records the outcome.
 * Each outcome (docs/architecture/sending-orders.md, "Outcomes") is handled in its own function
 * below. From the ledger's start to the service's answer the job holds one of the sending slots
 * (`deps.service.slots`); recording the answer and BullMQ's own bookkeeping happen after it is
 * given back, so they overlap the next job's request (docs/architecture/campaigns.md, "Sending
 * slots").
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export async function processCreateOrder(
  job: Job<OrderJobData>,
  deps: CreateOrderDeps,
  run: JobRun = {},
): Promise<CreateOrderJobResult> {
  const { outageHold, ordersQueue } = deps.queue;
  const admitted = outageHold?.admit() ?? "send";
  if (admitted === "wait") {
    // The service is known down and another job is seeing whether it is back: this one waits,
    // unsent, the ledger untouched (docs/architecture/sending-orders.md, "Service outages").
    deps.observers.onHeld?.(job.data.campaign);
    return putBack({ job, token: run.token }, ordersQueue, outageHold!.current());
  }
  try {
    return await processAdmitted(job, deps, run);
  } finally {
    if (admitted === "probe") outageHold?.probed();
  }
}

async function processAdmitted(
  job: Job<OrderJobData>,
  deps: CreateOrderDeps,
  run: JobRun,
): Promise<CreateOrderJobResult> {
  const { slots } = deps.service;
  const send = () => startAndSend(job, deps, run);
  const sent = await (slots ? slots(send) : send());
  if (sent.kind === "over") return sent.result;
  const error = sent.kind === "failed" ? sent.error : undefined;
  deps.observers.onRequestEnded?.(sent.attempt.campaign, error);
  // An answer, whatever it says: the service is there (a bug or a cancel says nothing of it).
  if (error === undefined || (error instanceof ApiError && error.status > 0 && !noAnswer(error)))
    deps.queue.outageHold?.reset();
  if (sent.kind === "failed") return handleFailure(sent.attempt, sent.error, deps);
  deps.queue.rateLimiter.reset();
  if (sent.result.kind === "completed")
    return recordCompleted(sent.attempt, sent.result.order, deps);
  return recordSubmitted(sent.attempt, sent.result.order.id, deps);
}

/**
 * Starts the order in the ledger (in_flight), makes its attempt and sends it. The start is
 * inside the slot, just before the request: an order waiting for a slot is still queued, so a
 * pause or cancel that comes meanwhile stops it.
 */
async function startAndSend(
  job: Job<OrderJobData>,
  deps: CreateOrderDeps,
  run: JobRun,
): Promise<Sent> {
  const { campaign, order: number } = job.data;
  const log = deps.log.child({ campaign, order: number, job: job.id });
  const start = await startInLedger(job, deps);
  if (start.kind !== "started") return over(await notStarted(job, start, { ...deps, log }));
  const attempt = await attemptOf(job, start, { ...deps, log, token: run.token });
  if (!("request" in attempt)) return over(attempt);
  deps.observers.onSending?.(campaign);
  try {
    return {
      kind: "answered",
      attempt,
      result: await sendOrder(attempt, run.signal, deps.service),
    };
  } catch (error) {
    return { kind: "failed", attempt, error };
  }
}

function over(result: CreateOrderJobResult): Sent {
  return { kind: "over", result };
}

/** START (see LedgerOrders.start): the order in flight, or why it is not. */
function startInLedger(
  job: Job<OrderJobData>,
  deps: Pick<CreateOrderDeps, "ledger" | "service" | "limits">,
): Promise<StartResult> {
  return deps.ledger.orders.start({
    campaign: job.data.campaign,
    number: job.data.order,
    patch: { attempts: job.attemptsMade + 1 },
    apiKeyFingerprint: deps.service.client.keyFingerprint,
    limit: deps.limits.dailyLimit,
  });
}

/** What a job ends with when the ledger did not start its order: nothing is sent. */
async function notStarted(
  job: Job<OrderJobData>,
  start: Exclude<StartResult, { kind: "started" }>,
  deps: Pick<CreateOrderDeps, "ledger" | "observers" | "log">,
): Promise<CreateOrderJobResult> {
  const { campaign } = job.data;
  const { observers, log } = deps;
  switch (start.kind) {
    case "paused":
      // Held or paused: the ledger put the order back on its pending list; this job is over.
      if (start.budget) {
        observers.onCampaignPaused?.(campaign, start.reason);
        log.error(
          `campaign ${campaign} paused: ${start.reason}. Nothing more of it is sent until the budget is raised (import the file again with a higher --budget), then: giftjobs orders resume --campaign ${campaign}`,
        );
      }
      return { status: "queued", skipped: true };
    case "daily-limit":
      // The ledger gave the order back, unsent; the campaigns of its currency pause.
      await pauseAtDailyLimit(campaign, start, {
        ledger: deps.ledger,
        log,
        onCampaignPaused: observers.onCampaignPaused,
      });
      return { status: "queued", skipped: true };
    case "past":
      return alreadyHandled(job, start.status, deps.ledger);
    case "other-api-key":
      observers.onOrderEnded?.("failed_uncertain");
      log.warn(
        { unclear: start.mark },
        "an earlier attempt under this key ended unclear under another API key, which the service may not replay under this one: nothing was sent, rows failed_uncertain (check the service's orders; see orders retry)",
      );
      return { status: "failed_uncertain" };
  }
}

/**
 * The attempt at the started order, its body made from the ledger's rows; or, when there is to
 * be none, what the job ends with: a body the ledger cannot make (failed_final), a product the
 * service said went out of order (the order back on the pending list).
 */
async function attemptOf(
  job: Job<OrderJobData>,
  start: Extract<StartResult, { kind: "started" }>,
  deps: Pick<CreateOrderDeps, "ledger" | "limits" | "observers"> & {
    log: Logger;
    token: string | undefined;
  },
): Promise<Attempt | CreateOrderJobResult> {
  const { campaign, order: number } = job.data;
  const { order } = start;
  const log = deps.log.child({ key: order.key });
  let request: OrderRequest;
  try {
    request = requestFromLedger(order, start.rows);
  } catch (error) {
    return failWithoutBody({ campaign, number, log }, error as Error, deps);
  }
  const held = { campaign, number, request, log };
  const guard = {
    guard: deps.limits.productGuard,
    ledger: deps.ledger,
    onPaused: deps.observers.onCampaignPaused,
  };
  if (await holdIfProductStopped(held, guard)) return { status: "queued", skipped: true };
  return {
    job,
    token: deps.token,
    campaign,
    number,
    key: order.key,
    identities: order.identities,
    generation: order.generation,
    request,
    mode: order.mode ?? job.data.executionMode ?? "async",
    campaignCreatedAt: start.campaignCreatedAt,
    log,
  };
}

/** The ledger cannot make the order's body: failed_final, nothing sent. */
async function failWithoutBody(
  order: { campaign: string; number: number; log: Logger },
  error: Error,
  deps: Pick<CreateOrderDeps, "ledger" | "observers">,
): Promise<CreateOrderJobResult> {
  const message = `the ledger cannot make this order's body (${error.message}); nothing was sent`;
  const moved = await deps.ledger.orders.transition({
    campaign: order.campaign,
    number: order.number,
    from: ["in_flight"],
    to: "failed_final",
    patch: { error_type: "no_request", error_message: message },
  });
  const status = moved.moved ? moved.status : "failed_final";
  if (moved.moved) deps.observers.onOrderEnded?.(endName(status));
  order.log.error(`${message}: rows ${status}`);
  return { status };
}

/** A sync order (or an async one the service finished at once): completed with its ids. */
async function recordCompleted(
  attempt: Attempt,
  order: Order,
  deps: Pick<CreateOrderDeps, "ledger" | "recording" | "observers">,
): Promise<CreateOrderJobResult> {
  const { campaign, number, log } = attempt;
  const store = deps.recording.storePayoutUrls;
  const patch = completedPatch(order, attempt.identities.length, store, attempt.campaignCreatedAt);
  const moved = await deps.ledger.orders.transition({
    campaign,
    number,
    from: ["in_flight"],
    to: "completed",
    patch,
    clearance: "answered",
  });
  deps.observers.onOutcome?.("completed");
  if (moved.moved) deps.observers.onOrderEnded?.("completed");
  if (patch.replayed) warnReplayed(log, campaign, order.created_at);
  else log.debug({ order_id: order.id }, "order completed");
  return { status: "completed", order_id: order.id };
}

/** An async order accepted: submitted, and followed (by webhooks, and polls as the net). */
async function recordSubmitted(
  attempt: Attempt,
  orderId: string,
  deps: Pick<CreateOrderDeps, "ledger" | "recording" | "observers">,
): Promise<CreateOrderJobResult> {
  const { campaign, number, log } = attempt;
  // Submitted, followed and (webhooks on) indexed in one script: the index entry is written
  // first, so a webhook that comes before this answer finds the order and is asked to come
  // again; the OrderFollower reads its status from then on.
  await deps.ledger.orders.transition({
    campaign,
    number,
    from: ["in_flight"],
    to: "submitted",
    patch: { order_id: orderId },
    follow: { at: Date.now() + deps.recording.firstPollDelayMs },
    clearance: "answered",
    index: deps.recording.orderIndex?.key,
  });
  deps.observers.onOutcome?.("submitted");
  log.debug({ order_id: orderId }, "order submitted; following its status");
  return { status: "submitted", order_id: orderId };
}

/** Sends the order; short blips (same key, always) are retried once inside the attempt. */
function sendOrder(attempt: Attempt, signal: AbortSignal | undefined, service: OrderService) {
  const send = async () => {
    try {
      return await service.client.createOrder(attempt.request, {
        idempotencyKey: attempt.key,
        executionMode: attempt.mode,
        signal,
      });
    } catch (error) {
      // A connection that never opened sent nothing: no mark
      // (docs/architecture/keys-and-exactly-once.md, "Nothing sent").
      if (error instanceof ApiError && error.status === 0 && !nothingSent(error))
        attempt.unclear ??= error.type;
      throw error;
    }
  };
  return pRetry(send, {
    retries: service.blipRetries,
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
async function alreadyHandled(job: Job<OrderJobData>, current: string | null, ledger: Ledger) {
  if (current === "submitted")
    await ledger.follows.add(job.data.campaign, job.data.order, Date.now());
  return { status: current ?? "unknown", skipped: true };
}

/**
 * The processor of `order-create` jobs on the `orders` queue: POST /v2/order under the job's
 * key and the outcome recorded in the ledger (docs/architecture/sending-orders.md, "Outcomes"). The
 * job's AbortSignal cancels the request when the worker shuts down.
 */
export function createOrderCreateProcessor(
  deps: CreateOrderDeps,
): (job: Job<OrderJobData>, token?: string, signal?: AbortSignal) => Promise<CreateOrderJobResult> {
  return (job, token, signal) => processCreateOrder(job, deps, { signal, token });
}
