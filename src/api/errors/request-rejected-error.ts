import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** Any other 4xx: final; the service made nothing. Fix the request; a retry needs a new key. */
export class RequestRejectedError extends ApiError {
  override readonly name = "RequestRejectedError";
  readonly outcome: Outcome = "final";
}
