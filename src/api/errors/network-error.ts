import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** The connection failed or was dropped before a response: an order may exist; retry with the same key. */
export class NetworkError extends ApiError {
  override readonly name: string = "NetworkError";
  readonly outcome: Outcome = "retry-same-key";
}
