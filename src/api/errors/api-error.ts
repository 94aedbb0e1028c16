/**
 * What a worker does with an outcome (docs/architecture/sending-orders.md, "Outcomes"):
 * - `retry-same-key`: nothing is known to have failed for good; an order may exist. Retry with the SAME key.
 * - `rate-limited`: 429; wait (at least 5 s, longer when it repeats) and send again.
 * - `systemic`: the account cannot order now (401/403, insufficient_funds, ordering_restricted); pause.
 * - `final`: a 4xx that guarantees no order was made; the row fails, a new generation may retry it.
 * - `key-conflict`: the key was used with another body; never retried.
 */
export type Outcome = "retry-same-key" | "rate-limited" | "systemic" | "final" | "key-conflict";

/**
 * Every kind of ApiError, by its name, with its outcome. The name is what logs, ledgers and
 * reports show (`toJSON`); code decides on `outcome` or `type`, and tells a kind apart with
 * `instanceof` only where a class of its own is kept below.
 */
const OUTCOMES = {
  /** A 5xx from the service (500 internal_server_error, 504 timeout, a proxy's 502 or 503). */
  ServerError: "retry-same-key",
  /** The connection failed or was dropped before a response: an order may exist. */
  NetworkError: "retry-same-key",
  /** Nothing answers at the service's address (ServiceUnreachableError). */
  ServiceUnreachableError: "retry-same-key",
  /** No response within the request timeout: an order may exist. */
  RequestTimeoutError: "retry-same-key",
  /** A response that is not what the interface promises (bad JSON, missing fields). */
  MalformedResponseError: "retry-same-key",
  /** The same key is still being processed by the service: wait and retry with it. */
  IdempotencyInProgressError: "retry-same-key",
  /** 429 rate exceeded: wait at least 5 s (longer when it repeats) and send again. */
  RateLimitedError: "rate-limited",
  /** 401/403 (unauthorized, invalid_api_key, forbidden): the account cannot order; pause. */
  UnauthorizedError: "systemic",
  /** insufficient_funds: the balance cannot pay; pause until it is topped up. */
  InsufficientFundsError: "systemic",
  /** 403 ordering_restricted (spending limit reached): pause. */
  OrderingRestrictedError: "systemic",
  /**
   * The service refused how the client is set up, whatever the order: 410 `version_removed`,
   * 400 `invalid_version` (GIFTJOBS_API_VERSION), 400 `insecure_protocol` (GIFTJOBS_API_URL
   * not HTTPS). Every order would get the same answer, so the campaign pauses.
   */
  ApiVersionError: "systemic",
  /** 422 validation_error, with `details` naming the fields (location) that are wrong. */
  ValidationError: "final",
  /** Any other 4xx: the service made nothing. Fix the request; a retry needs a new key. */
  RequestRejectedError: "final",
  /** idempotency_validation_error: the key was used with another body. Never retried. */
  IdempotencyConflictError: "key-conflict",
} as const satisfies Record<string, Outcome>;

export type ApiErrorName = keyof typeof OUTCOMES;

/**
 * The service's error types that decide the kind of error, or that the service answers under
 * the idempotency key (`underKey`, see answeredUnderKey); any other type goes by its status
 * (see kindOf). Branch on `type`, never on texts.
 */
const SERVICE_ERRORS = new Map<string, { kind?: ApiErrorName; underKey?: true }>([
  ["validation_error", { kind: "ValidationError", underKey: true }],
  ["product_validation_error", { underKey: true }],
  ["currency_mismatch", { underKey: true }],
  ["payment_method_unavailable", { underKey: true }],
  ["insufficient_funds", { kind: "InsufficientFundsError", underKey: true }],
  ["ordering_restricted", { kind: "OrderingRestrictedError", underKey: true }],
  ["idempotency_validation_error", { kind: "IdempotencyConflictError", underKey: true }],
  ["idempotency_in_progress", { kind: "IdempotencyInProgressError" }],
  ["unauthorized", { kind: "UnauthorizedError" }],
  ["invalid_api_key", { kind: "UnauthorizedError" }],
  ["forbidden", { kind: "UnauthorizedError" }],
  ["version_removed", { kind: "ApiVersionError" }],
  ["invalid_version", { kind: "ApiVersionError" }],
  ["insecure_protocol", { kind: "ApiVersionError" }],
]);

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
 * Every error the client raises about a request. `outcome` tells the caller what to do;
 * `type` is the service's error type (branch on it, never on texts). Messages never hold the API key.
 */
export class ApiError extends Error {
  override readonly name: ApiErrorName;
  readonly outcome: Outcome;
  readonly status: number;
  readonly type: string;
  readonly help: string | undefined;
  readonly details: ErrorDetail[];

  constructor(name: ApiErrorName, init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = name;
    this.outcome = OUTCOMES[name];
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

/*
 * The kinds a caller tells apart with `instanceof`: the account's refusals, each paused with its
 * own fix (jobs/orders/pause-reason.ts), a refused key at import, a 422's details, and a
 * malformed answer from the catalog's prices.
 */

export class UnauthorizedError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("UnauthorizedError", init);
  }
}

export class InsufficientFundsError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("InsufficientFundsError", init);
  }
}

export class OrderingRestrictedError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("OrderingRestrictedError", init);
  }
}

export class ApiVersionError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("ApiVersionError", init);
  }
}

export class ValidationError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("ValidationError", init);
  }
}

export class MalformedResponseError extends ApiError {
  constructor(init: ApiErrorInit) {
    super("MalformedResponseError", init);
  }
}

const CLASSES: Partial<Record<ApiErrorName, new (init: ApiErrorInit) => ApiError>> = {
  UnauthorizedError,
  InsufficientFundsError,
  OrderingRestrictedError,
  ApiVersionError,
  ValidationError,
  MalformedResponseError,
};

/** The kind of error of an answer of the service, by its type, else by its status. */
export function kindOf(status: number, type: string): ApiErrorName {
  const byType = SERVICE_ERRORS.get(type)?.kind;
  if (byType) return byType;
  if (status === 429) return "RateLimitedError";
  // 102 is how the service documents idempotency_in_progress besides 400.
  if (status === 102) return "IdempotencyInProgressError";
  if (status === 401 || status === 403) return "UnauthorizedError";
  if (status === 422) return "ValidationError";
  if (status >= 500) return "ServerError";
  return "RequestRejectedError";
}

/** An error of kind `name`, of its own class where it has one. */
export function apiError(name: ApiErrorName, init: ApiErrorInit): ApiError {
  const Class = CLASSES[name];
  return Class ? new Class(init) : new ApiError(name, init);
}

/**
 * Whether `error` is an answer the service gave under the request's idempotency key
 * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist"): the
 * service records such a refusal under the key and replays it for the same body, so it is the
 * key's last word whatever an earlier attempt under it did (an order made then would have been
 * replayed instead). They are the body's own faults, the account's money, and the key's record
 * itself. Not so: refusals made before the key is read (401, 403 `forbidden`, 410 and the other
 * version errors, 429), the service's 5xx, a timeout or dropped connection,
 * `idempotency_in_progress`, and any type not known here: an answer that is not known to speak
 * for the key says nothing about an earlier attempt.
 */
export function answeredUnderKey(error: ApiError): boolean {
  if (SERVICE_ERRORS.get(error.type)?.underKey) return true;
  // A 422 is the body's validation whatever its type is called.
  return error.status === 422;
}
