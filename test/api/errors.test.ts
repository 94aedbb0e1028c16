import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import {
  ApiError,
  type ApiErrorName,
  ApiVersionError,
  InsufficientFundsError,
  OrderingRestrictedError,
  type Outcome,
  UnauthorizedError,
  ValidationError,
} from "../../src/api/errors/index.js";
import type { OrderRequest } from "../../src/api/order-request.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { clientOf, item, KEY, rejectionOf, start, validOrder } from "../helpers/api-client.js";
import { newKey, openCard, sandboxOrders, stats } from "../helpers/sandbox.js";

type ErrorClass = abstract new (...args: never[]) => ApiError;

/** A kind with a class of its own is an instance of it; every kind is an ApiError of its name. */
function expectKind(error: unknown, kind: ErrorClass | ApiErrorName): void {
  expect(error).toBeInstanceOf(typeof kind === "string" ? ApiError : kind);
  expect((error as ApiError).name).toBe(typeof kind === "string" ? kind : kind.name);
}

/** Checks kind, status, type and outcome of an error the client raised. */
function expectApiError(
  error: unknown,
  kind: ErrorClass | ApiErrorName,
  status: number,
  type: string,
  outcome: Outcome,
): ApiError {
  expectKind(error, kind);
  const apiError = error as ApiError;
  expect({ status: apiError.status, type: apiError.type, outcome: apiError.outcome }).toEqual({
    status,
    type,
    outcome,
  });
  expect(apiError.message.length).toBeGreaterThan(0);
  return apiError;
}

/** POST /v2/order through the client's raw request(), with headers of our choosing. */
function rawOrder(client: ApiClient, body: unknown, headers: Record<string, string>) {
  return client.request({ method: "POST", path: "/v2/order", body, headers });
}

describe("errors of the service, each mapped to its class and outcome", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    sandbox = await start({ apiKey: KEY });
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it("401 invalid_api_key: a wrong key is UnauthorizedError, systemic", async () => {
    const wrong = clientOf(sandbox, { apiKey: "sk-wrong" });
    const error = await rejectionOf(wrong.getBalance("USD"));
    expectApiError(error, UnauthorizedError, 401, "invalid_api_key", "systemic");
    expect(error.message).toBe(
      "the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY",
    );
    expect(error.message).not.toContain("sk-wrong");
    const order = await rejectionOf(
      wrong.createOrder(validOrder(sandbox), { idempotencyKey: newKey() }),
    );
    expectApiError(order, UnauthorizedError, 401, "invalid_api_key", "systemic");
  });

  it("401 unauthorized: no key at all", async () => {
    const keyless = clientOf(sandbox, { apiKey: undefined });
    const error = await rejectionOf(keyless.listProducts({ limit: 1 }));
    expectApiError(error, UnauthorizedError, 401, "unauthorized", "systemic");
  });

  it("400 bad_request: a country that is not an ISO code", async () => {
    const error = await rejectionOf(client.listProducts({ countries_redeemable_in: ["usa"] }));
    const apiError = expectApiError(error, "RequestRejectedError", 400, "bad_request", "final");
    expect(apiError.help).toMatch(/^https:\/\//);
  });

  it("400 bad_request: a currency that is not an ISO code", async () => {
    const error = await rejectionOf(client.getBalance("usd"));
    expectApiError(error, "RequestRejectedError", 400, "bad_request", "final");
  });

  it("400 pagination_error: what the client refuses, sent raw", async () => {
    const both = new URLSearchParams({ after: "A", before: "B" });
    const error = await rejectionOf(
      client.request({ method: "GET", path: "/v2/product", query: both }),
    );
    expectApiError(error, "RequestRejectedError", 400, "pagination_error", "final");
    const limit = new URLSearchParams({ limit: "0" });
    const error2 = await rejectionOf(
      client.request({ method: "GET", path: "/v2/product", query: limit }),
    );
    expectApiError(error2, "RequestRejectedError", 400, "pagination_error", "final");
  });

  it("400 invalid_execution_mode: a raw X-Execution-Mode the client would refuse", async () => {
    const error = await rejectionOf(
      rawOrder(client, validOrder(sandbox), {
        "x-idempotency-key": newKey(),
        "x-execution-mode": "batch",
      }),
    );
    expectApiError(error, "RequestRejectedError", 400, "invalid_execution_mode", "final");
  });

  it("400 bad_request: an order without an idempotency key, sent raw", async () => {
    const error = await rejectionOf(rawOrder(client, validOrder(sandbox), {}));
    expectApiError(error, "RequestRejectedError", 400, "bad_request", "final");
  });

  it("400 invalid_version and 410 version_removed: a client with apiVersion set", async () => {
    const unknown = clientOf(sandbox, { apiVersion: "2099-01-01" });
    expectApiError(
      await rejectionOf(unknown.listProducts({ limit: 1 })),
      ApiVersionError,
      400,
      "invalid_version",
      "systemic",
    );
    const removed = clientOf(sandbox, { apiVersion: "2023-07-27" });
    expectApiError(
      await rejectionOf(removed.getBalance("USD")),
      ApiVersionError,
      410,
      "version_removed",
      "systemic",
    );
    expectApiError(
      await rejectionOf(removed.createOrder(validOrder(sandbox), { idempotencyKey: newKey() })),
      ApiVersionError,
      410,
      "version_removed",
      "systemic",
    );
  });

  it("createOrder's apiVersion overrides the client's for that call", async () => {
    const error = await rejectionOf(
      client.createOrder(validOrder(sandbox), {
        idempotencyKey: newKey(),
        apiVersion: "2023-01-16",
      }),
    );
    expectApiError(error, ApiVersionError, 410, "version_removed", "systemic");
  });

  it("400 product_validation_error: an unknown product, or a face value out of range", async () => {
    const unknown: OrderRequest = {
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
      items: [item("NO-SUCH-PRODUCT", 10)],
    };
    const error = await rejectionOf(client.createOrder(unknown, { idempotencyKey: newKey() }));
    expectApiError(error, "RequestRejectedError", 400, "product_validation_error", "final");
    const card = openCard(sandbox);
    const tooBig = Number(card.gift_card!.denominations.maximum_value) + 1;
    const order: OrderRequest = { ...unknown, items: [item(card.code, tooBig)] };
    const error2 = await rejectionOf(client.createOrder(order, { idempotencyKey: newKey() }));
    expectApiError(error2, "RequestRejectedError", 400, "product_validation_error", "final");
  });

  it("400 currency_mismatch: a USD product paid from another currency's balance", async () => {
    const order = validOrder(sandbox);
    order.payment_method.currency = "EUR";
    const error = await rejectionOf(client.createOrder(order, { idempotencyKey: newKey() }));
    expectApiError(error, "RequestRejectedError", 400, "currency_mismatch", "final");
  });

  it("400 insufficient_funds by X-Trigger-Error: InsufficientFundsError, systemic", async () => {
    const error = await rejectionOf(
      rawOrder(client, validOrder(sandbox), {
        "x-idempotency-key": newKey(),
        "x-trigger-error": "insufficient_funds",
      }),
    );
    expectApiError(error, InsufficientFundsError, 400, "insufficient_funds", "systemic");
  });

  it("403 ordering_restricted by X-Trigger-Error: OrderingRestrictedError, systemic", async () => {
    const error = await rejectionOf(
      rawOrder(client, validOrder(sandbox), {
        "x-idempotency-key": newKey(),
        "x-trigger-error": "ordering_restricted",
      }),
    );
    expectApiError(error, OrderingRestrictedError, 403, "ordering_restricted", "systemic");
  });

  it("404 not_found: an unknown order id, an unknown product code", async () => {
    expectApiError(
      await rejectionOf(client.getOrder("O-00000000000000000000000000")),
      "RequestRejectedError",
      404,
      "not_found",
      "final",
    );
    expectApiError(
      await rejectionOf(client.getProduct("NO-SUCH-CODE")),
      "RequestRejectedError",
      404,
      "not_found",
      "final",
    );
  });

  it("422 validation_error: ValidationError, final, with details naming each location", async () => {
    const order = validOrder(sandbox, 2);
    order.items[1]!.distribution_method.email_address = "not-an-email";
    order.description = "x".repeat(129);
    const error = await rejectionOf(client.createOrder(order, { idempotencyKey: newKey() }));
    const apiError = expectApiError(error, ValidationError, 422, "validation_error", "final");
    expect(apiError.details.map((d) => d.location)).toEqual(
      expect.arrayContaining([
        ["body", "items", "1", "distribution_method", "email_address"],
        ["body", "description"],
      ]),
    );
    for (const detail of apiError.details) {
      expect(detail.type).toEqual(expect.any(String));
      expect(detail.message).toEqual(expect.any(String));
    }
  });

  it("500 by X-Trigger-Error: ServerError, retry-same-key; the same key then succeeds", async () => {
    const key = newKey();
    const order = validOrder(sandbox);
    const error = await rejectionOf(
      rawOrder(client, order, {
        "x-idempotency-key": key,
        "x-trigger-error": "internal_server_error",
      }),
    );
    expectApiError(error, "ServerError", 500, "internal_server_error", "retry-same-key");
    const retried = await client.createOrder(order, { idempotencyKey: key });
    expect(retried.kind).toBe("accepted");
  });

  it("400 idempotency_validation_error: same key, another body: key-conflict", async () => {
    const key = newKey();
    const order = validOrder(sandbox);
    await client.createOrder(order, { idempotencyKey: key });
    const other = validOrder(sandbox);
    other.description = "another body";
    const error = await rejectionOf(client.createOrder(other, { idempotencyKey: key }));
    expectApiError(
      error,
      "IdempotencyConflictError",
      400,
      "idempotency_validation_error",
      "key-conflict",
    );
  });

  it("a final error is replayed for the same key and body (nothing made, even on retry)", async () => {
    const key = newKey();
    const order = validOrder(sandbox);
    order.payment_method.currency = "EUR";
    const first = await rejectionOf(client.createOrder(order, { idempotencyKey: key }));
    const again = await rejectionOf(client.createOrder(order, { idempotencyKey: key }));
    expectApiError(first, "RequestRejectedError", 400, "currency_mismatch", "final");
    expectApiError(again, "RequestRejectedError", 400, "currency_mismatch", "final");
    expect((await sandboxOrders(sandbox)).some((o) => o.idempotency_key === key)).toBe(false);
  });
});

describe("errors that need a sandbox of their own", () => {
  const sandboxes: Sandbox[] = [];
  afterAll(() => Promise.all(sandboxes.map((s) => s.close())));
  async function own(options: Parameters<typeof start>[0]) {
    const sandbox = await start(options);
    sandboxes.push(sandbox);
    return { sandbox, client: clientOf(sandbox) };
  }

  it("insufficient_funds from a low balance: InsufficientFundsError, systemic", async () => {
    const { sandbox, client } = await own({ balances: { USD: "0.01" } });
    const error = await rejectionOf(
      client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() }),
    );
    expectApiError(error, InsufficientFundsError, 400, "insufficient_funds", "systemic");
    expect(await sandboxOrders(sandbox)).toEqual([]);
  });

  it("429 past the order rate limit: RateLimitedError, rate-limited", async () => {
    const { sandbox, client } = await own({ orderRateLimit: 2 });
    for (let i = 0; i < 2; i++) {
      await client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() });
    }
    const error = await rejectionOf(
      client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() }),
    );
    const apiError = expectApiError(error, "RateLimitedError", 429, "rate_limited", "rate-limited");
    expect(apiError.message).toBe("rate exceeded");
    expect((await stats(sandbox)).requests["POST /v2/order"]).toEqual({ "202": 2, "429": 1 });
  });

  it("500 from fail_rate 1: ServerError, retry-same-key, and no order made", async () => {
    const { sandbox, client } = await own({ failRate: 1 });
    const error = await rejectionOf(
      client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() }),
    );
    expectApiError(error, "ServerError", 500, "internal_server_error", "retry-same-key");
    expect(await sandboxOrders(sandbox)).toEqual([]);
  });
});
