import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** A response that is not what the interface promises (bad JSON, missing fields). An order may exist. */
export class MalformedResponseError extends ApiError {
  override readonly name = "MalformedResponseError";
  readonly outcome: Outcome = "retry-same-key";
}
