import { ApiError } from "./api-error.js";
import type { Reply } from "./product-routes.js";
import type { SandboxState } from "./state.js";
import type { OrderItem } from "./types.js";

/** The OpenAPI's PayoutStatus. */
const PAYOUT_STATUSES = new Set(["ACTIVE", "CLAIMED", "CANCELLED", "EXPIRED"]);

function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "")
    throw new ApiError("bad_request", `${field} must be a non-empty string`);
  return value;
}

/** The items `{item_id}` or `{order_id}` names (all of the order's); a 400/404 otherwise. */
function namedItems(state: SandboxState, body: Record<string, unknown>): OrderItem[] {
  const itemId = text(body, "item_id");
  const orderId = text(body, "order_id");
  if ((itemId === undefined) === (orderId === undefined))
    throw new ApiError("bad_request", "give one of item_id and order_id");
  if (orderId !== undefined) {
    const stored = state.book.orders.get(orderId);
    if (!stored) throw new ApiError("not_found", `No order ${orderId}`);
    return stored.order.items;
  }
  for (const stored of state.book.orders.values()) {
    const item = stored.order.items.find((i) => i.id === itemId);
    if (item) return [item];
  }
  throw new ApiError("not_found", `No item ${itemId}`);
}

/**
 * POST /_sandbox/payouts `{item_id | order_id, status, expiry_date?}`: what the recipient (or
 * time) did to payout links: CLAIMED, EXPIRED, CANCELLED, or ACTIVE again; `expiry_date` a new
 * expiry (ISO 8601). Answers the items' payouts, without their URLs.
 */
export function changePayouts(state: SandboxState, body: Record<string, unknown>): Reply {
  const status = body.status;
  if (typeof status !== "string" || !PAYOUT_STATUSES.has(status))
    throw new ApiError("bad_request", `status must be one of ${[...PAYOUT_STATUSES].join(", ")}`);
  const expiry = body.expiry_date;
  if (expiry !== undefined && (typeof expiry !== "string" || !Number.isFinite(Date.parse(expiry))))
    throw new ApiError("bad_request", "expiry_date must be an ISO 8601 time");
  const items = namedItems(state, body);
  const now = new Date().toISOString();
  for (const item of items) {
    item.payout.status = status;
    item.payout.status_updated_at = now;
    if (typeof expiry === "string") item.payout.expiry_date = new Date(expiry).toISOString();
  }
  const payouts = items.map(({ id, payout }) => ({
    id,
    status: payout.status,
    status_updated_at: payout.status_updated_at,
    expiry_date: payout.expiry_date,
  }));
  return { status: 200, body: JSON.stringify({ items: payouts }) };
}

/**
 * POST /_sandbox/orders/forget `{order_id}`: the service loses an order (as if it had never made
 * it): it leaves the book and the lists, its lookups answer 404. Its idempotency record stays.
 */
export function forgetOrder(state: SandboxState, body: Record<string, unknown>): Reply {
  const orderId = text(body, "order_id");
  if (orderId === undefined) throw new ApiError("bad_request", "order_id is required");
  const stored = state.book.orders.get(orderId);
  if (!stored) throw new ApiError("not_found", `No order ${orderId}`);
  state.book.orders.delete(orderId);
  state.book.itemCount -= stored.order.items.length;
  return { status: 200, body: JSON.stringify({ forgotten: orderId }) };
}
