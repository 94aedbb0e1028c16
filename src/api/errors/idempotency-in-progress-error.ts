import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** The same key is still being processed by the service: wait and retry with the same key. */
export class IdempotencyInProgressError extends ApiError {
  override readonly name = "IdempotencyInProgressError";
  readonly outcome: Outcome = "retry-same-key";
}
