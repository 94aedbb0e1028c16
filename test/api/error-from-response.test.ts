import { describe, expect, it } from "vitest";
import { errorFromResponse } from "../../src/api/error-from-response.js";
import {
  ApiError,
  type ApiErrorName,
  ApiVersionError,
  answeredUnderKey,
  InsufficientFundsError,
  OrderingRestrictedError,
  UnauthorizedError,
  ValidationError,
} from "../../src/api/errors/index.js";

type ErrorClass = abstract new (...args: never[]) => ApiError;

/** A kind with a class of its own is an instance of it; every kind is an ApiError of its name. */
function expectKind(error: unknown, kind: ErrorClass | ApiErrorName): void {
  expect(error).toBeInstanceOf(typeof kind === "string" ? ApiError : kind);
  expect((error as ApiError).name).toBe(typeof kind === "string" ? kind : kind.name);
}

const body = (type: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type, message: `about ${type}`, help: "https://docs.example/errors", ...extra });

describe("errorFromResponse", () => {
  it.each([
    [400, "bad_request", "RequestRejectedError", "final"],
    [400, "pagination_error", "RequestRejectedError", "final"],
    [400, "invalid_version", ApiVersionError, "systemic"],
    [400, "invalid_execution_mode", "RequestRejectedError", "final"],
    [400, "product_validation_error", "RequestRejectedError", "final"],
    [400, "currency_mismatch", "RequestRejectedError", "final"],
    [400, "payment_method_unavailable", "RequestRejectedError", "final"],
    [400, "insecure_protocol", ApiVersionError, "systemic"],
    [400, "insufficient_funds", InsufficientFundsError, "systemic"],
    [400, "idempotency_validation_error", "IdempotencyConflictError", "key-conflict"],
    [400, "idempotency_in_progress", "IdempotencyInProgressError", "retry-same-key"],
    [102, "idempotency_in_progress", "IdempotencyInProgressError", "retry-same-key"],
    [401, "unauthorized", UnauthorizedError, "systemic"],
    [401, "invalid_api_key", UnauthorizedError, "systemic"],
    [403, "forbidden", UnauthorizedError, "systemic"],
    [403, "ordering_restricted", OrderingRestrictedError, "systemic"],
    [404, "not_found", "RequestRejectedError", "final"],
    [410, "version_removed", ApiVersionError, "systemic"],
    [422, "validation_error", ValidationError, "final"],
    [500, "internal_server_error", "ServerError", "retry-same-key"],
    [504, "timeout", "ServerError", "retry-same-key"],
  ] as const)("%i %s -> %o, %s", (status, type, cls, outcome) => {
    const error = errorFromResponse(status, body(type));
    expectKind(error, cls);
    expect(error).toMatchObject({
      status,
      type,
      outcome,
      // A refused key names the setting instead of the service's text (see below).
      message: status === 401 ? expect.stringMatching(/check GIFTJOBS_API_KEY$/) : `about ${type}`,
      help: "https://docs.example/errors",
    });
  });

  it("a refused API key names the setting to check, whatever the service says", () => {
    expect(errorFromResponse(401, body("invalid_api_key")).message).toBe(
      "the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY",
    );
    expect(errorFromResponse(401, body("unauthorized")).message).toBe(
      "the API key is missing or not valid (unauthorized, HTTP 401): check GIFTJOBS_API_KEY",
    );
    expect(errorFromResponse(401, "<html>proxy</html>").message).toBe(
      "the API key is not valid (http_401, HTTP 401): check GIFTJOBS_API_KEY",
    );
    // A 403 is not about the key being wrong: the service's own words stay.
    expect(errorFromResponse(403, body("forbidden")).message).toBe("about forbidden");
  });

  it("keeps a 422's details, with their location", () => {
    const details = [
      {
        type: "missing",
        message: "Field required",
        location: ["body", "items", "0", "face_value"],
      },
    ];
    const error = errorFromResponse(422, body("validation_error", { details }));
    expect(error.details).toEqual(details);
  });

  it("a 502 with an HTML body: ServerError, retry-same-key, without the HTML in the message", () => {
    const html = "<html><body><h1>502 Bad Gateway</h1><p>secret-internal-host</p></body></html>";
    const error = errorFromResponse(502, html);
    expect(error).toMatchObject({ name: "ServerError" });
    expect(error).toMatchObject({ status: 502, type: "http_502", outcome: "retry-same-key" });
    expect(error.message).toBe(`HTTP 502 (${html.length} bytes, not an error body)`);
    expect(JSON.stringify(error)).not.toContain("secret-internal-host");
  });

  it('429 {"error":"rate exceeded"}: RateLimitedError with that message', () => {
    const error = errorFromResponse(429, '{"error":"rate exceeded"}');
    expect(error).toMatchObject({ name: "RateLimitedError" });
    expect(error).toMatchObject({
      status: 429,
      type: "rate_limited",
      outcome: "rate-limited",
      message: "rate exceeded",
    });
  });

  it("429 with an empty body is still rate-limited", () => {
    const error = errorFromResponse(429, "");
    expect(error).toMatchObject({ name: "RateLimitedError" });
    expect(error.message).toBe("HTTP 429");
  });

  it("102 without a body: in progress, retry-same-key", () => {
    const error = errorFromResponse(102, "");
    expect(error).toMatchObject({ name: "IdempotencyInProgressError" });
    expect(error).toMatchObject({ status: 102, type: "http_102", outcome: "retry-same-key" });
  });

  it("maps by type before status: a 400 of an unknown type is final, a 403 of any type systemic", () => {
    expect(errorFromResponse(400, body("brand_new_type"))).toMatchObject({
      name: "RequestRejectedError",
    });
    expect(errorFromResponse(403, body("brand_new_type"))).toBeInstanceOf(UnauthorizedError);
    expect(errorFromResponse(422, "{}")).toBeInstanceOf(ValidationError);
    expect(errorFromResponse(503, "null")).toMatchObject({ name: "ServerError" });
  });

  it("survives odd bodies: arrays, numbers, wrong field types, broken details", () => {
    for (const raw of ["[]", "42", '"text"', "{", '{"type": 7, "message": {}}']) {
      const error = errorFromResponse(400, raw);
      expect(error).toMatchObject({ name: "RequestRejectedError" });
      expect(error.type).toBe("http_400");
      expect(error.message).toMatch(/^HTTP 400/);
    }
    const odd = errorFromResponse(
      422,
      JSON.stringify({ type: "validation_error", details: [null, { location: "body" }, 5] }),
    );
    expect(odd).toBeInstanceOf(ValidationError);
    expect(odd.details).toHaveLength(3);
    expect(odd.details.every((d) => d.location === undefined)).toBe(true);
  });

  it("bounds what it keeps of a long message", () => {
    const error = errorFromResponse(400, body("bad_request", { message: "x".repeat(10_000) }));
    expect(error.message.length).toBeLessThanOrEqual(500);
  });

  it("JSON of an error is a short, safe summary", () => {
    const error = errorFromResponse(400, body("currency_mismatch"));
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: "RequestRejectedError",
      status: 400,
      type: "currency_mismatch",
      outcome: "final",
      message: "about currency_mismatch",
    });
  });

  it("answered under the key: the body's faults, the account's money and the key's record; not 401, 403, 429, 5xx or an unknown type", () => {
    const under = (status: number, type: string) =>
      answeredUnderKey(errorFromResponse(status, body(type)));
    for (const type of [
      "validation_error",
      "product_validation_error",
      "currency_mismatch",
      "payment_method_unavailable",
      "insufficient_funds",
      "ordering_restricted",
      "idempotency_validation_error",
    ])
      expect(under(400, type), type).toBe(true);
    expect(under(422, "brand_new_type")).toBe(true);
    expect(under(400, "idempotency_in_progress")).toBe(false);
    expect(under(401, "invalid_api_key")).toBe(false);
    expect(under(403, "forbidden")).toBe(false);
    expect(under(410, "version_removed")).toBe(false);
    expect(under(429, "rate_limited")).toBe(false);
    expect(under(500, "internal_server_error")).toBe(false);
    // A type named like a property of every object is still an unknown type.
    expect(under(400, "constructor")).toBe(false);
    expect(errorFromResponse(400, body("constructor"))).toMatchObject({
      name: "RequestRejectedError",
      outcome: "final",
    });
  });
});
