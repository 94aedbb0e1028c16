import { Worker } from "bullmq";
import {
  ApiError,
  answeredUnderKey,
  nothingSent,
  RefusedRequestError,
  ValidationError,
} from "../../src/api/errors/index.js";
import { pauseIfRunning } from "../../src/campaigns/control.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { KeyClearance, OrderPatch } from "../../src/ledger/types.js";
import { orderKey } from "../../src/orders/keys.js";
import { failedItemIndex } from "../../src/orders/outcome.js";
import {
  type Attempt,
  type CreateOrderDeps,
  type CreateOrderJobResult,
  endName,
} from "./attempt.js";
import { noAnswer, OutageHold, putBack } from "./outage.js";
import { pauseReason } from "./pause-reason.js";

/**
 * What an attempt that got no order ends with, one function per outcome of
 * docs/architecture/sending-orders.md, "Outcomes": a refusal, a 429, a systemic refusal that pauses
 * the campaign, a final refusal (one item of several: the rest move to the next generation), a key
 * conflict, or an unclear answer retried under the same key.
 */
export async function handleFailure(
  attempt: Attempt,
  error: unknown,
  deps: CreateOrderDeps,
): Promise<CreateOrderJobResult> {
  // A blip before the last answer may have reached the service: the order is marked before the
  // outcome is recorded (an answer under the key, if this is one, then removes the mark again).
  if (attempt.unclear)
    await deps.ledger.orders.transition({
      campaign: attempt.campaign,
      number: attempt.number,
      from: ["in_flight"],
      to: "in_flight",
      patch: { unclear: attempt.unclear },
    });
  if (error instanceof RefusedRequestError) {
    // Nothing was sent; an earlier attempt's mark, if any, keeps the rows failed_uncertain.
    const status = await markFailed(attempt, deps, {
      status: "failed_final",
      type: "refused_by_client",
      message: error.message,
    });
    deps.observers.onOutcome?.("final");
    return { status };
  }
  if (!(error instanceof ApiError)) {
    // Not an answer from the service (a bug, Redis trouble, the worker stopping mid-request):
    // the request may have reached the service, so the key is marked; BullMQ retries it.
    await requeue(attempt, deps.ledger, { unclear: "interrupted" });
    throw error;
  }
  if (nothingSent(error)) return waitUnsent(attempt, error, deps);
  switch (error.outcome) {
    case "rate-limited":
      return rateLimited(attempt, error, deps);
    case "systemic":
      return pauseCampaign(attempt, error, deps);
    case "final":
      return finalFailure(attempt, error, deps);
    case "key-conflict":
      // The key exists with another body: an order may exist under it. Never retried.
      await markFailed(attempt, deps, {
        status: "failed_uncertain",
        type: error.type,
        message: error.message,
        unclear: error.type,
      });
      deps.observers.onOutcome?.("key_conflict");
      attempt.log.error({ type: error.type }, "idempotency key conflict: rows failed, not retried");
      return { status: "failed_uncertain" };
    default:
      return retrySameKey(attempt, error, deps);
  }
}

/** The ledger, and who is told of an end: what recording an outcome needs. */
type Ends = Pick<CreateOrderDeps, "ledger" | "observers">;
/** Recording an outcome and putting the job back, or holding the queue. */
type Holds = Pick<CreateOrderDeps, "ledger" | "observers" | "queue">;
/** Recording an outcome and moving rows to a new key (journaled, with the API key's print). */
type NewKeys = Pick<CreateOrderDeps, "ledger" | "observers" | "journal" | "service">;

/** How an order ends failed: the status, the error kept on its rows, and the key's marks. */
interface Failure {
  status: "failed_final" | "failed_uncertain";
  type: string;
  message: string;
  clearance?: KeyClearance;
  unclear?: string;
}

/**
 * Ends the attempt's order failed. `clearance` "answered" when the service answered under the key;
 * otherwise a failed_final becomes failed_uncertain while an earlier attempt's mark stands (the
 * ledger decides, atomically). Returns the status reached.
 */
async function markFailed(attempt: Attempt, deps: Ends, failure: Failure): Promise<string> {
  const { status, type, message } = failure;
  const moved = await deps.ledger.orders.transition({
    campaign: attempt.campaign,
    number: attempt.number,
    from: ["in_flight", "queued"],
    to: status,
    patch: { error_type: type, error_message: message, unclear: failure.unclear },
    clearance: failure.clearance,
  });
  if (!moved.moved) return moved.current ?? status;
  deps.observers.onOrderEnded?.(endName(moved.status));
  return moved.status;
}

/** 5xx, network, timeout, in-progress: the SAME key again after BullMQ's backoff, or uncertain at the end. */
async function retrySameKey(attempt: Attempt, error: ApiError, deps: Holds) {
  const { job, log } = attempt;
  // Counted as what the service's answer was, whether or not attempts remain.
  deps.observers.onOutcome?.("retry_same_key");
  if (noAnswer(error) && deps.queue.outageHold?.down()) return waitOutOutage(attempt, error, deps);
  const attempts = job.opts.attempts ?? 1;
  if (job.attemptsMade + 1 >= attempts) {
    await markFailed(attempt, deps, {
      status: "failed_uncertain",
      type: error.type,
      message: error.message,
      unclear: error.type,
    });
    log.warn(
      { type: error.type, attempts },
      "attempts used up; an order may exist: rows failed_uncertain",
    );
    return { status: "failed_uncertain" };
  }
  await requeue(attempt, deps.ledger, {
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

/**
 * The connection never opened (refused, host not found): nothing was sent, so the order gets no
 * mark and the job uses no attempt. It goes back to wait under its same key while the whole queue
 * is held (docs/architecture/sending-orders.md, "Service outages"): a service that is away is
 * waited for, however long, instead of used up.
 */
async function waitUnsent(
  attempt: Attempt,
  error: ApiError,
  deps: Holds,
): Promise<CreateOrderJobResult> {
  deps.observers.onOutcome?.("retry_same_key");
  await requeue(attempt, deps.ledger, { error_type: error.type, error_message: error.message });
  const waitMs = (deps.queue.outageHold ?? new OutageHold()).next();
  attempt.log.debug(
    { type: error.type, wait_ms: waitMs },
    "nothing sent (the connection never opened); holding the queue, same key, no attempt used",
  );
  return putBack(attempt, deps.queue.ordersQueue, waitMs);
}

/**
 * No answer (a timeout, a reset, a 5xx) while the worker knows the service is down: the request
 * may have reached it, so the order keeps its mark, but the job uses no attempt while the outage
 * lasts (docs/architecture/sending-orders.md, "Service outages"): an outage longer than the
 * attempts' backoff does not end rows failed_uncertain.
 */
async function waitOutOutage(
  attempt: Attempt,
  error: ApiError,
  deps: Pick<CreateOrderDeps, "ledger" | "queue">,
): Promise<CreateOrderJobResult> {
  await requeue(attempt, deps.ledger, {
    error_type: error.type,
    error_message: error.message,
    unclear: error.type,
  });
  const waitMs = deps.queue.outageHold!.next();
  attempt.log.debug(
    { type: error.type, wait_ms: waitMs },
    "no answer while the service is down; holding the queue, same key, no attempt used",
  );
  return putBack(attempt, deps.queue.ordersQueue, waitMs);
}

/**
 * After this many 429s one job's further 429s use attempts, so nothing loops forever.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const MAX_RATE_LIMITED = 100;

/** 429: hold the queue (queue-wide), put the job back to waiting without using an attempt. */
async function rateLimited(
  attempt: Attempt,
  error: ApiError,
  deps: Holds,
): Promise<CreateOrderJobResult> {
  const { job, log } = attempt;
  const count = (job.data.rateLimited ?? 0) + 1;
  if (count > MAX_RATE_LIMITED) return retrySameKey(attempt, error, deps);
  await job.updateData({ ...job.data, rateLimited: count });
  await requeue(attempt, deps.ledger);
  const waitMs = deps.queue.rateLimiter.next();
  // Every job in flight may get one: a debug line each (the metric counts them).
  log.debug({ wait_ms: waitMs }, "rate limited by the service (429); holding the queue");
  await deps.queue.ordersQueue.rateLimit(waitMs);
  throw Worker.RateLimitError();
}

/**
 * 401/403, a removed API version, insufficient funds, ordering restricted: pause the campaign.
 * A refusal given before the service read the key (401, 403, the version errors) recorded
 * nothing under it and says nothing of an earlier attempt: the rows keep their key and go back
 * to the pending list, sent after resume. One given after (funds, spending limit) is recorded
 * under the key and would be replayed forever, and it is the key's last word (an order made
 * earlier would have been replayed instead): the rows move to the next generation's key now
 * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist").
 */
async function pauseCampaign(
  attempt: Attempt,
  error: ApiError,
  deps: NewKeys,
): Promise<CreateOrderJobResult> {
  const { campaign, log } = attempt;
  deps.observers.onOutcome?.("systemic");
  // What to fix and the command to resume are part of the reason: status, list and the
  // dashboard show it as it is.
  const reason = await pauseReason(
    error,
    { campaign, currency: attempt.request.payment_method.currency },
    { client: deps.service.client, ledger: deps.ledger },
  );
  if (await pauseIfRunning(deps.ledger, campaign, reason)) {
    deps.observers.onCampaignPaused?.(campaign, reason);
    log.error({ type: error.type }, `campaign ${campaign} paused: ${reason}`);
  }
  if (answeredUnderKey(error)) {
    // The next generation waits on the pending list; the dispatcher sends it after resume.
    await nextGeneration(attempt, { identities: attempt.identities }, deps);
  } else {
    // No error on the order: the pause's reason says it, and a queued order's error type is
    // read as the mark of an unclear attempt by the ledger (from before the mark had a field).
    await deps.ledger.orders.transition({
      campaign,
      number: attempt.number,
      from: ["in_flight"],
      to: "queued",
      patch: {},
      follow: "pending",
    });
  }
  return { status: "queued" };
}

/**
 * Other 4xx: nothing was made. A 422 naming one item of several fails that row only; the
 * others go at once under the next generation's key (a new key, since the body changes).
 */
async function finalFailure(attempt: Attempt, error: ApiError, deps: NewKeys) {
  const { identities, log } = attempt;
  const index = error instanceof ValidationError ? failedItemIndex(error.details) : undefined;
  deps.observers.onOutcome?.("final");
  const clearance = answeredUnderKey(error) ? "answered" : undefined;
  if (index === undefined || identities.length < 2 || index >= identities.length || !clearance) {
    const status = await markFailed(attempt, deps, {
      status: "failed_final",
      type: error.type,
      message: error.message,
      clearance,
    });
    // One per order: counted in the tracker's progress lines and `orders report`.
    log.debug(
      { type: error.type, status },
      "order refused by the service; rows failed_final (nothing was made) unless an earlier attempt ended unclear",
    );
    return { status };
  }
  const rest = identities.filter((_, i) => i !== index);
  const newKey = await nextGeneration(
    attempt,
    { identities: rest, restPatch: { error_type: error.type, error_message: error.message } },
    deps,
  );
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
  move: { identities: string[]; restPatch?: OrderPatch },
  deps: Pick<CreateOrderDeps, "ledger" | "journal" | "service">,
): Promise<string> {
  const { identities } = move;
  const generation = attempt.generation + 1;
  const newKey = orderKey(attempt.campaign, generation, identities);
  const a = deps.service.client.keyFingerprint;
  const i = [...identities].sort();
  const line = a ? { g: generation, k: newKey, i, a } : { g: generation, k: newKey, i };
  await deps.journal.append(attempt.campaign, line);
  const done = await deps.ledger.orders.rekey({
    campaign: attempt.campaign,
    number: attempt.number,
    key: newKey,
    identities,
    generation,
    from: ["in_flight"],
    restStatus: "failed_final",
    restPatch: move.restPatch,
    clearance: "answered",
  });
  if (!done.done) {
    attempt.log.warn({ why: done.why }, "the rows were not moved to the next generation");
    // The ledger never held the new key: its line is voided, as `orders retry --new-key` does
    // (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist"). A
    // journal that cannot take it leaves the line, as before voids: said, and the attempt ends
    // as it would.
    await deps.journal.void?.(attempt.campaign, line).catch((error: unknown) => {
      attempt.log.warn(
        { error: (error as Error).message, key: newKey },
        "the journal line of the key not moved to could not be voided",
      );
    });
  }
  return newKey;
}

/** The attempt's order back to queued under its same key, with `patch` (an error, a mark). */
function requeue(attempt: Attempt, ledger: Ledger, patch: OrderPatch = {}) {
  return ledger.orders.transition({
    campaign: attempt.campaign,
    number: attempt.number,
    from: ["in_flight"],
    to: "queued",
    patch,
  });
}
