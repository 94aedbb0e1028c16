import { ENV_NAMES } from "../config.js";
import {
  type ApiError,
  type ApiErrorInit,
  ApiVersionError,
  type ErrorDetail,
  IdempotencyConflictError,
  IdempotencyInProgressError,
  InsufficientFundsError,
  OrderingRestrictedError,
  RateLimitedError,
  RequestRejectedError,
  ServerError,
  UnauthorizedError,
  ValidationError,
} from "./errors/index.js";

type ErrorClass = new (init: ApiErrorInit) => ApiError;

/** Error types whose class is not decided by the status alone. Branch on `type`, never on texts. */
const BY_TYPE: Record<string, ErrorClass> = {
  idempotency_validation_error: IdempotencyConflictError,
  idempotency_in_progress: IdempotencyInProgressError,
  insufficient_funds: InsufficientFundsError,
  ordering_restricted: OrderingRestrictedError,
  unauthorized: UnauthorizedError,
  invalid_api_key: UnauthorizedError,
  forbidden: UnauthorizedError,
  validation_error: ValidationError,
  version_removed: ApiVersionError,
  invalid_version: ApiVersionError,
  insecure_protocol: ApiVersionError,
};

function classFor(status: number, type: string): ErrorClass {
  const byType = BY_TYPE[type];
  if (byType) return byType;
  if (status === 429) return RateLimitedError;
  // 102 is how the service documents idempotency_in_progress besides 400.
  if (status === 102) return IdempotencyInProgressError;
  if (status === 401 || status === 403) return UnauthorizedError;
  if (status === 422) return ValidationError;
  if (status >= 500) return ServerError;
  return RequestRejectedError;
}

function text(value: unknown, max = 500): string | undefined {
  return typeof value === "string" ? value.slice(0, max) : undefined;
}

function detailsOf(body: Record<string, unknown>): ErrorDetail[] | undefined {
  if (!Array.isArray(body.details)) return undefined;
  return body.details.slice(0, 50).map((d: Record<string, unknown>) => ({
    type: text(d?.type),
    message: text(d?.message),
    location: Array.isArray(d?.location) ? (d.location as (string | number)[]) : undefined,
  }));
}

/**
 * Builds the error for a non-2xx response from its `{type, message, help}` body, the 422
 * `details` list, or the 429 `{"error": "rate exceeded"}` shape. Bodies that are not JSON
 * (a proxy's HTML page) still map by status.
 */
export function errorFromResponse(status: number, rawBody: string): ApiError {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(rawBody);
    if (parsed && typeof parsed === "object") body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: keep the status, describe the body by its length only.
  }
  const type = text(body.type, 100) ?? typeOfStatus(status);
  const message =
    text(body.message) ??
    text(body.error) ??
    `HTTP ${status}${rawBody ? ` (${rawBody.length} bytes, not an error body)` : ""}`;
  const ErrorType = classFor(status, type);
  return new ErrorType({
    status,
    type,
    message: keyRefused(status, type) ?? message,
    help: text(body.help),
    details: detailsOf(body),
  });
}

/**
 * A refused API key says which setting to check: the service's own text ("The API key is not
 * valid") does not. Never quotes the key.
 */
function keyRefused(status: number, type: string): string | undefined {
  if (status !== 401 && type !== "invalid_api_key") return undefined;
  const what = type === "unauthorized" ? "missing or not valid" : "not valid";
  return `the API key is ${what} (${type}, HTTP ${status}): check ${ENV_NAMES.apiKey}`;
}

/**
 * The type of an error whose body names none. Only a bare 500 is the service's own
 * internal_server_error; a 502 or 503 is usually a proxy's page, and is reported as what it is.
 */
function typeOfStatus(status: number): string {
  if (status === 429) return "rate_limited";
  if (status === 500) return "internal_server_error";
  return `http_${status}`;
}
