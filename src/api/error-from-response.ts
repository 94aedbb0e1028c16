import { ENV_NAMES } from "../config.js";
import { type ApiError, apiError, type ErrorDetail, kindOf } from "./errors/index.js";

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
  return apiError(kindOf(status, type), {
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
