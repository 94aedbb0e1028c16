import type { ApiError } from "./api-error.js";

/**
 * Refusals the service gives after reading the idempotency key: it records them under the key
 * and replays them for the same body, so such an answer is the key's last word whatever an
 * earlier attempt under it did (an order made then would have been replayed instead). From the
 * service's error list: the body's own faults, the account's money, and the key's record itself.
 */
const READ_UNDER_KEY = new Set([
  "validation_error",
  "product_validation_error",
  "currency_mismatch",
  "payment_method_unavailable",
  "insufficient_funds",
  "ordering_restricted",
  "idempotency_validation_error",
]);

/**
 * Whether `error` is an answer the service gave under the request's idempotency key
 * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist"). Not so:
 * refusals made before the key is read (401, 403 `forbidden`, 410 and the other version errors,
 * 429), the service's 5xx, a timeout or dropped connection, `idempotency_in_progress`, and any type
 * not known here: an answer that is not known to speak for the key says nothing about an earlier
 * attempt.
 */
export function answeredUnderKey(error: ApiError): boolean {
  if (READ_UNDER_KEY.has(error.type)) return true;
  // A 422 is the body's validation whatever its type is called.
  return error.status === 422;
}
