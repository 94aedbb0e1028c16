import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { rejectionOf, start, validOrder } from "../helpers/api-client.js";
import { newKey } from "../helpers/sandbox.js";

const SECRET = "sk-test-SECRET-9f8e7d";

/** Every way an error can be shown or stored: none may hold the key. */
function expectNoSecret(error: Error, secret = SECRET): void {
  const shown = [
    String(error),
    error.message,
    JSON.stringify(error),
    error.stack ?? "",
    JSON.stringify({ ...error }),
    String((error as { cause?: unknown }).cause ?? ""),
  ];
  for (const text of shown) expect(text).not.toContain(secret);
  // The core of the key too, in case it was trimmed or escaped on the way.
  for (const text of shown) expect(text).not.toContain("SECRET-9f8e7d");
}

describe("no error carries the API key", () => {
  let sandbox: Sandbox;
  let wrongKey: Sandbox;
  const errors: [string, Error][] = [];

  beforeAll(async () => {
    sandbox = await start({ apiKey: SECRET });
    // A sandbox expecting another key: every call with SECRET is a 401.
    wrongKey = await start({ apiKey: "sk-other" });
  });
  afterAll(() => Promise.all([sandbox.close(), wrongKey.close()]));

  const client = (s: Sandbox, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
    new ApiClient({ baseUrl: s.url, apiKey: SECRET, timeoutMs: 5000, ...extra });

  it("in 4xx, 5xx, 422, 429, transport, timeout, abort and malformed-page errors", async () => {
    const c = client(sandbox);
    const order = validOrder(sandbox);
    const bad = validOrder(sandbox);
    bad.items[0]!.distribution_method.email_address = "nope";
    const raw = (headers: Record<string, string>) =>
      c.request({
        method: "POST",
        path: "/v2/order",
        body: order,
        headers: { "x-idempotency-key": newKey(), ...headers },
      });

    errors.push(["401", await rejectionOf(client(wrongKey).getBalance("USD"))]);
    errors.push(["404", await rejectionOf(c.getProduct("NOPE"))]);
    errors.push(["422", await rejectionOf(c.createOrder(bad, { idempotencyKey: newKey() }))]);
    errors.push(["500", await rejectionOf(raw({ "x-trigger-error": "internal_server_error" }))]);
    errors.push(["funds", await rejectionOf(raw({ "x-trigger-error": "insufficient_funds" }))]);
    errors.push(["mode", await rejectionOf(raw({ "x-execution-mode": "nope" }))]);
    errors.push([
      "version",
      await rejectionOf(client(sandbox, { apiVersion: "2023-07-27" }).getBalance("USD")),
    ]);

    sandbox.setFaults({ orderRateLimit: 1 });
    await rejectionOf(raw({ "x-execution-mode": "nope" }));
    errors.push(["429", await rejectionOf(c.createOrder(order, { idempotencyKey: newKey() }))]);

    sandbox.setFaults({
      orderRateLimit: 300,
      productPageFault: { after: null, kind: "malformed" },
    });
    errors.push(["malformed", await rejectionOf(c.listProducts())]);
    const fifth = sandbox.state.catalog.products[4]!.code;
    sandbox.setFaults({ productPageFault: { after: fifth, kind: "stuck_cursor" } });
    const pages = c.pages({ limit: 5 });
    await pages.next();
    await pages.next();
    errors.push(["stuck", await rejectionOf(pages.next())]);
    sandbox.setFaults({ productPageFault: null });

    sandbox.setFaults({ dropRate: 1 });
    errors.push(["dropped", await rejectionOf(c.createOrder(order, { idempotencyKey: newKey() }))]);
    sandbox.setFaults({ dropRate: 0, latencyMs: 2000 });
    errors.push([
      "timeout",
      await rejectionOf(client(sandbox, { timeoutMs: 100 }).getBalance("USD")),
    ]);
    errors.push(["aborted", await rejectionOf(c.getBalance("USD", AbortSignal.abort()))]);
    sandbox.setFaults({ latencyMs: 0 });

    const closed = await start();
    await closed.close();
    errors.push(["refused", await rejectionOf(client(closed).getBalance("USD"))]);

    const names = errors.map(([what, error]) => `${what}: ${error.name}`);
    expect(names).toEqual([
      "401: UnauthorizedError",
      "404: RequestRejectedError",
      "422: ValidationError",
      "500: ServerError",
      "funds: InsufficientFundsError",
      "mode: RequestRejectedError",
      "version: ApiVersionError",
      "429: RateLimitedError",
      "malformed: MalformedResponseError",
      "stuck: MalformedResponseError",
      "dropped: NetworkError",
      "timeout: RequestTimeoutError",
      "aborted: NetworkError",
      "refused: ServiceUnreachableError",
    ]);
    for (const [, error] of errors) expectNoSecret(error);
  });

  it("a key no HTTP header can carry is refused up front, without quoting it", () => {
    for (const key of [`${SECRET}\nx`, `${SECRET}\u0000`, `x\r${SECRET}`, `${SECRET}\u20ac`]) {
      let error: Error | undefined;
      try {
        new ApiClient({ baseUrl: sandbox.url, apiKey: key });
      } catch (thrown) {
        error = thrown as Error;
      }
      expect(error, JSON.stringify(key)).toBeInstanceOf(TypeError);
      expect(error!.message).toContain("apiKey");
      expectNoSecret(error!);
    }
  });

  it("a key with surrounding whitespace (read from a file) is sent trimmed, as fetch does", async () => {
    const c = new ApiClient({ baseUrl: sandbox.url, apiKey: ` ${SECRET}\n`, timeoutMs: 5000 });
    expect(await c.getBalance("USD")).toMatchObject({ currency: "USD" });
  });
});
