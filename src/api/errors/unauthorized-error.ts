import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** 401/403 (unauthorized, invalid_api_key, forbidden): the account cannot order; pause. */
export class UnauthorizedError extends ApiError {
  override readonly name = "UnauthorizedError";
  readonly outcome: Outcome = "systemic";
}
