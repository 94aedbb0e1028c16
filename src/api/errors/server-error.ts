import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** 5xx from the service (500 internal_server_error, 504 timeout, ...): retry with the same key. */
export class ServerError extends ApiError {
  override readonly name = "ServerError";
  readonly outcome: Outcome = "retry-same-key";
}
