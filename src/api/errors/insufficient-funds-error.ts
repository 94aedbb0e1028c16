import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/** insufficient_funds: the balance cannot pay; pause until it is topped up. */
export class InsufficientFundsError extends ApiError {
  override readonly name = "InsufficientFundsError";
  readonly outcome: Outcome = "systemic";
}
