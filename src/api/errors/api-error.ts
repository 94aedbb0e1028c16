import type { Outcome } from "./outcome.js";

/** One entry of a 422 `details` list. */
export interface ErrorDetail {
  type?: string;
  message?: string;
  location?: (string | number)[];
}

export interface ApiErrorInit {
  status: number;
  type: string;
  message: string;
  help?: string;
  details?: ErrorDetail[];
  cause?: unknown;
}

/**
 * Base of every error the client raises about a request. `outcome` tells the caller what to do;
 * `type` is the service's error type (branch on it, never on texts). Messages never hold the API key.
 */
export abstract class ApiError extends Error {
  abstract readonly outcome: Outcome;
  readonly status: number;
  readonly type: string;
  readonly help: string | undefined;
  readonly details: ErrorDetail[];

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.help = init.help;
    this.details = init.details ?? [];
  }

  /** A short, safe summary for logs, ledgers and reports. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      status: this.status,
      type: this.type,
      outcome: this.outcome,
      message: this.message,
    };
  }
}
