/**
 * The client refused to send a request that breaks the interface's rules (no idempotency key,
 * sync mode with several items, limit outside 1..500, after and before together).
 * Nothing was sent.
 */
export class RefusedRequestError extends Error {
  override readonly name = "RefusedRequestError";
}
