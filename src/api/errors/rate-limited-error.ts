import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** 429 rate exceeded: wait at least 5 s (longer when it repeats) and send again. */
export class RateLimitedError extends ApiError {
  override readonly name = "RateLimitedError";
  readonly outcome: Outcome = "rate-limited";
}
