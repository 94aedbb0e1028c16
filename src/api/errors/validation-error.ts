import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** 422 validation_error, with `details` naming the fields (location) that are wrong. Final. */
export class ValidationError extends ApiError {
  override readonly name = "ValidationError";
  readonly outcome: Outcome = "final";
}
