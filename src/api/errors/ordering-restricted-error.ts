import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** 403 ordering_restricted (spending limit reached): pause. */
export class OrderingRestrictedError extends ApiError {
  override readonly name = "OrderingRestrictedError";
  readonly outcome: Outcome = "systemic";
}
