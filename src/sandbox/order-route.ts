import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, isErrorType, type ValidationDetail } from "./api-error.js";
import {
  header,
  noteErrorType,
  RateExceeded,
  readBody,
  sendError,
  sendJson,
  sleep,
} from "./http-util.js";
import type { RecordedResponse } from "./idempotency.js";
import type { SandboxState } from "./state.js";
import { type NewOrderItem, validateOrderBody } from "./validate-order.js";

/** Errors the test host forces with X-Trigger-Error. */
const TRIGGERABLE = new Set(["insufficient_funds", "internal_server_error", "ordering_restricted"]);

const REDEEM_BASE = "https://redeem.sandbox.invalid";

export interface OrderContext {
  state: SandboxState;
  req: IncomingMessage;
  res: ServerResponse;
  /** The caller's API key: idempotency keys are scoped to it. */
  apiKey: string;
  /** This request's injected latency. */
  delayMs: number;
  /** Called when the connection is cut on purpose (for the stats). */
  onDrop: () => void;
}

/** Checks made on arrival; nothing recorded under the idempotency key when they fail. */
function checkArrival(state: SandboxState, req: IncomingMessage): { key: string; sync: boolean } {
  // Every order request counts against the limit, whatever happens to it afterwards.
  if (!state.orderWindow.hit()) throw new RateExceeded("rate exceeded");
  if (state.dice.roll(state.faults.failRate)) {
    throw new ApiError("internal_server_error", "Injected failure (fail rate)");
  }
  const key = header(req, "x-idempotency-key");
  if (!key) throw new ApiError("bad_request", "The X-Idempotency-Key header is required");
  const mode = header(req, "x-execution-mode") ?? "async";
  if (mode !== "async" && mode !== "sync") {
    throw new ApiError("invalid_execution_mode", "X-Execution-Mode must be async or sync");
  }
  return { key, sync: mode === "sync" };
}

/** The order itself, once the key is ours: trigger header, JSON, schema, catalog, balance. */
function process(
  state: SandboxState,
  req: IncomingMessage,
  raw: string,
  key: string,
  sync: boolean,
  apiKey: string,
) {
  const trigger = header(req, "x-trigger-error");
  if (trigger && TRIGGERABLE.has(trigger) && isErrorType(trigger)) {
    throw new ApiError(trigger, `Triggered by X-Trigger-Error: ${trigger}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ApiError("bad_request", "The request body is not valid JSON");
  }
  const request = validateOrderBody(parsed, sync);
  refuseEmails(state, request.items);
  const asyncMs = sync ? undefined : state.faults.asyncCompleteMs;
  const fails = !sync && state.dice.roll(state.faults.asyncFailRate);
  const stored = state.book.create(
    state.catalog,
    request,
    key,
    asyncMs,
    REDEEM_BASE,
    fails,
    apiKey,
  );
  if (!sync) state.webhooks?.orderAccepted(stored);
  const body = sync ? stored.order : { id: stored.order.id, status: "PROCESSING" };
  return { status: sync ? 200 : 202, body: JSON.stringify(body) };
}

/** Fault `refuseEmails`: a 422 naming each item sent to a refused address. */
function refuseEmails(state: SandboxState, items: NewOrderItem[]): void {
  const refused = new Set(state.faults.refuseEmails);
  if (refused.size === 0) return;
  const details: ValidationDetail[] = [];
  items.forEach((item, index) => {
    const dm = item.distribution_method;
    if (dm.type === "PAYOUT_LINK" || !refused.has(dm.email_address)) return;
    details.push({
      type: "value_error",
      message: "This recipient cannot be sent to",
      location: ["body", "items", String(index), "distribution_method", "email_address"],
    });
  });
  if (details.length > 0)
    throw new ApiError("validation_error", "Request failed validation", details);
}

/** Fault `failAfterRate`: the order was made and recorded, but the caller hears a 5xx. */
function failAfter(state: SandboxState): ApiError | undefined {
  if (!state.dice.roll(state.faults.failAfterRate)) return undefined;
  return state.faults.failAfterStatus === 504
    ? new ApiError("timeout", "Injected gateway timeout after the order was made")
    : new ApiError("internal_server_error", "Injected failure after the order was made");
}

/**
 * POST /v2/order with the service's idempotency rules: the final answer of a key is recorded
 * with the body's hash and replayed for the same body; 429s and 5xx are never recorded. What is
 * refused before the key is read (401/403, 410, 400 invalid_version in server.ts; 429 and the
 * fail rate's 500 in checkArrival) leaves nothing under the key; a fail-after 5xx is answered
 * in place of an answer that is recorded (src/sandbox/README.md, "Idempotency").
 */
export async function createOrder(ctx: OrderContext): Promise<void> {
  const { state, req, res, apiKey } = ctx;
  let arrival: { key: string; sync: boolean };
  try {
    arrival = checkArrival(state, req);
  } catch (error) {
    await sleep(ctx.delayMs);
    throw error;
  }
  const { key, sync } = arrival;
  const raw = await readBody(req);
  const lookup = state.idempotency.begin(apiKey, key, raw);
  if (lookup.kind !== "new") {
    await sleep(ctx.delayMs);
    if (lookup.kind === "running") {
      throw new ApiError("idempotency_in_progress", "A request with this key is still running");
    }
    if (lookup.kind === "conflict") {
      throw new ApiError(
        "idempotency_validation_error",
        "This idempotency key was used with a different request body",
      );
    }
    const { status, body, headers } = lookup.response;
    if (status >= 400) noteErrorType(res, body);
    return sendJson(res, status, body, { ...headers, "X-Sandbox-Replayed": "true" });
  }

  await sleep(ctx.delayMs);
  let response: RecordedResponse;
  let created = false;
  try {
    response = { ...process(state, req, raw, key, sync, apiKey), headers: {} };
    created = true;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) {
      state.idempotency.abandon(apiKey, key);
      throw error;
    }
    response = { status: error.status, body: JSON.stringify(error.body()), headers: {} };
  }
  state.idempotency.finish(apiKey, key, raw, response);
  if (created && state.dice.roll(state.faults.dropRate)) {
    // The order exists and its key is recorded; the client just never hears of it.
    ctx.onDrop();
    req.socket.destroy();
    return;
  }
  const failure = created ? failAfter(state) : undefined;
  if (failure) return sendError(res, failure);
  if (response.status >= 400) noteErrorType(res, response.body);
  sendJson(res, response.status, response.body, response.headers);
}
