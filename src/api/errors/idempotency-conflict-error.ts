import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** idempotency_validation_error: the key was used with another body. Never retried. */
export class IdempotencyConflictError extends ApiError {
  override readonly name = "IdempotencyConflictError";
  readonly outcome: Outcome = "key-conflict";
}
