import type { Job } from "bullmq";
import pRetry from "p-retry";
import type { CreateOrderResult } from "../../src/api/client.js";
import { ApiError, nothingSent } from "../../src/api/errors/index.js";
import type { OrderRequest } from "../../src/api/order-request.js";
import type { Order } from "../../src/api/schemas.js";
import { completedPatch, warnReplayed } from "../../src/orders/outcome.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { holdIfProductStopped } from "../../src/webhooks/product-guard.js";
import {
  type Attempt,
  type CreateOrderDeps,
  type CreateOrderJobResult,
  endName,
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

/**
 * Processes one `orders` job: POST /v2/order under the job's key, then records the outcome.
 * Each outcome (docs/architecture/sending-orders.md, "Outcomes") is handled in its own function
 * below. From the ledger's start to the service's answer the job holds one of `deps.sending`'s
 * slots; recording the answer and BullMQ's own bookkeeping happen after it is given back, so they
 * overlap the next job's request (docs/architecture/campaigns.md, "Sending slots").
 */
export async function processCreateOrder(
  job: Job<OrderJobData>,
  signal: AbortSignal | undefined,
  deps: CreateOrderDeps,
  token?: string,
): Promise<CreateOrderJobResult> {
  const admitted = deps.outageHold?.admit() ?? "send";
  if (admitted === "wait") {
    // The service is known down and another job is seeing whether it is back: this one waits,
    // unsent, the ledger untouched (docs/architecture/sending-orders.md, "Service outages").
    deps.onHeld?.(job.data.campaign);
    return putBack(job, token, deps.ordersQueue, deps.outageHold!.current());
  }
  try {
    return await processAdmitted(job, signal, deps, token);
  } finally {
    if (admitted === "probe") deps.outageHold?.probed();
  }
}

async function processAdmitted(
  job: Job<OrderJobData>,
  signal: AbortSignal | undefined,
  deps: CreateOrderDeps,
  token: string | undefined,
): Promise<CreateOrderJobResult> {
  const send = () => startAndSend(job, signal, deps, token);
  const sent = await (deps.sending ? deps.sending(send) : send());
  if (sent.kind === "over") return sent.result;
  const error = sent.kind === "failed" ? sent.error : undefined;
  deps.onRequestEnded?.(sent.attempt.campaign, error);
  // An answer, whatever it says: the service is there (a bug or a cancel says nothing of it).
  if (error === undefined || (error instanceof ApiError && error.status > 0 && !noAnswer(error)))
    deps.outageHold?.reset();
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
  token: string | undefined,
): Promise<Sent> {
  const { campaign, order: number } = job.data;
  let log = deps.log.child({ campaign, order: number, job: job.id });

  const start = await deps.ledger.orders.start({
    campaign,
    number,
    patch: { attempts: job.attemptsMade + 1 },
    apiKeyFingerprint: deps.client.keyFingerprint,
    limit: deps.dailyLimit,
  });
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
  // The daily limit: the ledger gave the order back, unsent; the campaigns of its currency pause.
  if (start.kind === "daily-limit") {
    await pauseAtDailyLimit(campaign, start, { ...deps, log });
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
    const moved = await deps.ledger.orders.transition({
      campaign,
      number,
      from: ["in_flight"],
      to: "failed_final",
      patch: {
        error_type: "no_request",
        error_message: message,
      },
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
    token,
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
  const moved = await deps.ledger.orders.transition({
    campaign,
    number,
    from: ["in_flight"],
    to: "completed",
    patch,
    clearance: "answered",
  });
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
  // Submitted, followed and (webhooks on) indexed in one script: the index entry is written
  // first, so a webhook that comes before this answer finds the order and is asked to come
  // again; the OrderFollower reads its status from then on.
  await deps.ledger.orders.transition({
    campaign,
    number,
    from: ["in_flight"],
    to: "submitted",
    patch: { order_id: orderId },
    follow: { at: Date.now() + (deps.firstPollDelayMs ?? 1000) },
    clearance: "answered",
    index: deps.orderIndex?.key,
  });
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
      // A connection that never opened sent nothing: no mark
      // (docs/architecture/keys-and-exactly-once.md, "Nothing sent").
      if (error instanceof ApiError && error.status === 0 && !nothingSent(error))
        attempt.unclear ??= error.type;
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
    await deps.ledger.follows.add(job.data.campaign, job.data.order, Date.now());
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
  return (job, token, signal) => processCreateOrder(job, signal, deps, token);
}
