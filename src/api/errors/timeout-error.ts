import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** No response within the request timeout: an order may exist; retry with the same key. */
export class RequestTimeoutError extends ApiError {
  override readonly name = "RequestTimeoutError";
  readonly outcome: Outcome = "retry-same-key";
}
