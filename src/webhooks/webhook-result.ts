/** The message types the service sends, and `unknown` for a signed body of another shape. */
export type WebhookMessageType = "order.completion" | "product.update" | "unknown";

/** What the receiver did with one request (the metric's `result` label). */
export type WebhookResult =
  /** The ledger (or the product overrides, in Redis) holds the change now. */
  | "applied"
  /** A webhook-id already applied: nothing done. */
  | "duplicate"
  /** No campaign order has this order id (webhooks were off when it was sent, or not ours). */
  | "unknown_order"
  /** The order had ended already (a poll was first): nothing changed. */
  | "already_ended"
  /**
   * The order index names an order the ledger holds under another order id: nothing changed,
   * acknowledged (2xx).
   */
  | "mismatch"
  /** The order is not `submitted` yet (the webhook beat the worker): 409, sent again later. */
  | "not_yet"
  /** An older product.update than one recorded (out of order): ignored. */
  | "stale"
  /** Bad, missing or stale signature: 401, nothing changed. */
  | "unauthorized"
  /** Signed, but not a message we can read: 400. */
  | "bad_request"
  /** Could not be recorded (Redis, disk): 500, the service sends it again. */
  | "error";

export const WEBHOOK_RESULTS: readonly WebhookResult[] = [
  "applied",
  "duplicate",
  "unknown_order",
  "already_ended",
  "mismatch",
  "not_yet",
  "stale",
  "unauthorized",
  "bad_request",
  "error",
];

export const WEBHOOK_TYPES: readonly WebhookMessageType[] = [
  "order.completion",
  "product.update",
  "unknown",
];
