import { CompletedOrderSchema, ProductUpdateSchema } from "../api/schemas.js";
import type { ProductOverrideStore } from "../catalog/product-overrides.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ReportedEnd } from "../ledger/types.js";
import type { Logger } from "../log.js";
import type { IndexedOrder, OrderIndex } from "./order-index.js";
import {
  applyRemoteOrderEnd,
  type RemoteOrderEnd,
  type RemoteOrderOutcome,
} from "./remote-order-state.js";
import type { WebhookMessageType, WebhookResult } from "./webhook-result.js";

/** What applying a verified message needs. */
export interface ApplyMessageDeps {
  ledger: Ledger;
  orderIndex: OrderIndex;
  /** Where product.update's states are recorded: Redis, or the database when configured. */
  productOverrides: ProductOverrideStore;
  log: Logger;
  storePayoutUrls?: boolean;
  onOrderEnded?: (outcome: RemoteOrderOutcome) => void;
}

export interface Applied {
  type: WebhookMessageType;
  result: WebhookResult;
}

/**
 * A signed body's type, by its shape (the service sends no type header or envelope): a
 * `product_code` and a `new_state` make a product.update, read whole later (a malformed one is
 * answered 400 as a product.update).
 */
export function messageType(body: unknown): WebhookMessageType {
  if (!body || typeof body !== "object") return "unknown";
  const b = body as Record<string, unknown>;
  if (typeof b.product_code === "string" && b.new_state !== undefined) return "product.update";
  if (typeof b.id === "string" && typeof b.status === "string") return "order.completion";
  return "unknown";
}

/** The service's order id of an `order.completion` body, or undefined. */
export function completionOrderId(body: unknown): string | undefined {
  return messageType(body) === "order.completion" ? (body as { id: string }).id : undefined;
}

/** What the order index held for the message's order id, when the caller has read it. */
export interface LookedUp {
  target: IndexedOrder | undefined;
}

/**
 * Applies a verified, parsed message. Throws on Redis or disk trouble (the caller answers 500).
 * `lookedUp`: the order index's entry for completionOrderId(body), read by the caller (in the
 * script that claims the message id: claim-message.ts); without it, it is read here.
 * `messageId`: the message's id (`svix-id`), by which an unknown FAILED order is asked again once.
 */
export async function applyMessage(
  deps: ApplyMessageDeps,
  body: unknown,
  lookedUp?: LookedUp,
  messageId?: string,
): Promise<Applied> {
  const type = messageType(body);
  if (type === "order.completion")
    return { type, result: await orderCompletion(deps, body, lookedUp, messageId) };
  if (type === "product.update") return { type, result: await productUpdate(deps, body) };
  return { type, result: "bad_request" };
}

/**
 * An `order.completion`: the order the index names is ended only when it is `submitted` under
 * this very order id, checked in the script that ends it (docs/architecture/webhooks.md,
 * "Webhooks").
 */
async function orderCompletion(
  deps: ApplyMessageDeps,
  body: unknown,
  lookedUp: LookedUp | undefined,
  messageId: string | undefined,
): Promise<WebhookResult> {
  const { id, status } = body as { id: string; status: string };
  if (status === "PROCESSING") return "bad_request";
  let end: RemoteOrderEnd;
  if (status === "COMPLETED") {
    // The service's message has the order's basic details and no items (OpenAPI
    // CompletedOrderWebhook): the order ends on them, its items are read later if asked for.
    const parsed = CompletedOrderSchema.safeParse(body);
    if (!parsed.success) return "bad_request";
    end = { status: "COMPLETED", order: parsed.data };
  } else end = { status, id };
  const target = lookedUp ? lookedUp.target : await deps.orderIndex.find(id);
  if (!target) return unknownOrder(deps, end, messageId);
  const log = deps.log.child({ campaign: target.campaign, order: target.number, order_id: id });
  // One script checks that the order holds this id, ends it and forgets the id (see
  // applyRemoteOrderEnd): with the claim, two round trips a message.
  const result = await applyRemoteOrderEnd(
    {
      ledger: deps.ledger,
      log,
      storePayoutUrls: deps.storePayoutUrls,
      onOrderEnded: deps.onOrderEnded,
      orderIndex: deps.orderIndex,
    },
    { ...target, orderId: id },
    end,
  );
  return resultOf(result, log);
}

/** The receiver's answer for what the ledger found (docs/architecture/webhooks.md, "Webhooks"). */
function resultOf(found: ReportedEnd | undefined, log: Logger): WebhookResult {
  if (!found) return "bad_request";
  switch (found.kind) {
    case "moved":
      return "applied";
    case "gone":
      return "unknown_order";
    // Indexed just before the worker records `submitted` with the order id: the message beat it.
    // Asked again later, when the order id it is checked against is recorded.
    case "not-yet":
      return "not_yet";
    case "past":
      return "already_ended";
    case "mismatch":
      // The index names an order the ledger holds under another order id: ending it would end
      // another order than the service's. Acknowledged (a retry would find the same), not applied.
      log.warn(
        { ledger_order_id: found.heldId ?? null, ledger_status: found.status },
        "a webhook's order id is not the one the ledger holds for the order the index names: nothing changed",
      );
      return "mismatch";
  }
}

/** How long after its creation an unknown COMPLETED order may still be one being accepted. */
const ACCEPT_WINDOW_MS = 120_000;

/**
 * An order id nobody indexed: not ours, made while webhooks were off, or ours a moment before
 * the worker indexed it (the service can be that fast). A COMPLETED order made in the last two
 * minutes is asked again (409: the service retries) for that last case. A FAILED message says
 * nothing of when the order was made: it is asked again once, by its message id (the service's
 * next try comes seconds later, when an order of ours is indexed); not ours, it is then 2xx, and
 * is not retried for days. Anything else is 2xx, and a poll is the net.
 */
async function unknownOrder(
  deps: ApplyMessageDeps,
  end: RemoteOrderEnd,
  messageId: string | undefined,
): Promise<WebhookResult> {
  if (end.order) {
    const made = end.order.created_at ? Date.parse(end.order.created_at) : Number.NaN;
    return Date.now() - made < ACCEPT_WINDOW_MS ? "not_yet" : "unknown_order";
  }
  if (messageId !== undefined && (await deps.orderIndex.firstAsk(messageId))) return "not_yet";
  return "unknown_order";
}

/**
 * A `product.update` as the OpenAPI defines it (ProductUpdateWebhook: each state an object of
 * `price_multiplier`, `is_orderable` and maybe `denominations`); any other shape, the states as
 * strings included, is 400. Its new state is recorded (Redis, or the database) unless a newer message's is
 * (docs/architecture/webhooks.md, "Webhooks").
 */
async function productUpdate(deps: ApplyMessageDeps, body: unknown): Promise<WebhookResult> {
  const parsed = ProductUpdateSchema.safeParse(body);
  if (!parsed.success) return "bad_request";
  const update = parsed.data;
  const result = await deps.productOverrides.record(update);
  const { price_multiplier, is_orderable, denominations } = update.new_state;
  deps.log.info(
    {
      product_code: update.product_code,
      is_orderable,
      price_multiplier,
      denominations: denominations ?? undefined,
      timestamp: update.timestamp,
      result,
    },
    "product state pushed by the service",
  );
  return result;
}
