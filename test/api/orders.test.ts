import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { RefusedRequestError } from "../../src/api/errors/index.js";
import { LATEST_VERSION, type Sandbox } from "../../src/sandbox/index.js";
import { clientOf, rejectionOf, start, validOrder } from "../helpers/api-client.js";
import { newKey, sandboxOrders, stats } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait-for.js";

describe("createOrder and getOrder", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    sandbox = await start({ asyncCompleteMs: 50 });
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it("sync: 200, kind completed, the full order with its items", async () => {
    const order = validOrder(sandbox);
    const result = await client.createOrder(order, {
      idempotencyKey: newKey(),
      executionMode: "sync",
    });
    expect(result.kind).toBe("completed");
    if (result.kind !== "completed") return;
    expect(result.status).toBe(200);
    expect(result.order.status).toBe("COMPLETED");
    expect(result.order.id).toMatch(/^O-/);
    expect(result.order.items).toHaveLength(1);
    const [first] = result.order.items;
    expect(first?.id).toMatch(/^E-/);
    expect(first?.products).toEqual(order.items[0]!.products);
    expect(first?.distribution_method?.email_address).toBe(
      order.items[0]!.distribution_method.email_address,
    );
    const lookup = await client.getOrder(result.order.id);
    expect(lookup).toEqual({ kind: "order", order: result.order });
  });

  it("async: 202, kind accepted, then getOrder turns into a COMPLETED order", async () => {
    const result = await client.createOrder(validOrder(sandbox, 3), { idempotencyKey: newKey() });
    expect(result.kind).toBe("accepted");
    expect(result.status).toBe(202);
    expect(result.order.status).toBe("PROCESSING");
    const id = result.order.id;
    const done = await waitFor(async () => {
      const lookup = await client.getOrder(id);
      return lookup.kind === "order" ? lookup.order : undefined;
    });
    expect(done.id).toBe(id);
    expect(done.status).toBe("COMPLETED");
    expect(done.items).toHaveLength(3);
    expect(done.completed_at).toEqual(expect.any(String));
  });

  it("async is the default; executionMode async is sent as such", async () => {
    const result = await client.createOrder(validOrder(sandbox, 2), {
      idempotencyKey: newKey(),
      executionMode: "async",
    });
    expect(result.kind).toBe("accepted");
  });

  it("replay: the same key and body answer the same order, status and body equal", async () => {
    const key = newKey();
    const order = validOrder(sandbox);
    const first = await client.createOrder(order, { idempotencyKey: key, executionMode: "sync" });
    const again = await client.createOrder(structuredClone(order), {
      idempotencyKey: key,
      executionMode: "sync",
    });
    expect(again).toEqual(first);
    expect((await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key)).toHaveLength(1);
  });

  it("replay of an async order: the same id, one order in the sandbox", async () => {
    const key = newKey();
    const order = validOrder(sandbox, 2);
    const first = await client.createOrder(order, { idempotencyKey: key });
    const again = await client.createOrder(order, { idempotencyKey: key });
    expect(again).toEqual(first);
    expect((await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key)).toHaveLength(1);
  });
});

describe("getOrder while the order is still processing", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    // Long enough that the order is surely still PROCESSING when read back.
    sandbox = await start({ asyncCompleteMs: 600_000 });
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it("is kind processing, with the order's id", async () => {
    const result = await client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() });
    const lookup = await client.getOrder(result.order.id);
    expect(lookup.kind).toBe("processing");
    expect(lookup.order.id).toBe(result.order.id);
    expect(lookup.order.status).toBe("PROCESSING");
  });
});

describe("createOrder refusals: nothing reaches the server", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    sandbox = await start();
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  async function expectRefused(send: () => Promise<unknown>, message: RegExp) {
    const before = await stats(sandbox);
    const error = await rejectionOf(send());
    expect(error).toBeInstanceOf(RefusedRequestError);
    expect(error.message).toMatch(message);
    const after = await stats(sandbox);
    expect(after.total_requests).toBe(before.total_requests);
    expect(after.orders).toBe(0);
  }

  it("without an idempotency key", async () => {
    await expectRefused(
      () => client.createOrder(validOrder(sandbox), { idempotencyKey: "" }),
      /idempotency key/,
    );
    await expectRefused(
      () =>
        client.createOrder(validOrder(sandbox), {
          idempotencyKey: undefined as unknown as string,
        }),
      /idempotency key/,
    );
  });

  it("sync with two items (or none)", async () => {
    await expectRefused(
      () =>
        client.createOrder(validOrder(sandbox, 2), {
          idempotencyKey: newKey(),
          executionMode: "sync",
        }),
      /sync mode takes exactly one item, got 2/,
    );
    await expectRefused(
      () =>
        client.createOrder(validOrder(sandbox, 0), {
          idempotencyKey: newKey(),
          executionMode: "sync",
        }),
      /got 0/,
    );
  });

  it("an execution mode other than async or sync", async () => {
    await expectRefused(
      () =>
        client.createOrder(validOrder(sandbox), {
          idempotencyKey: newKey(),
          executionMode: "batch" as "async",
        }),
      /execution mode/,
    );
  });
});

describe("balances and the API version", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    sandbox = await start({ balances: { USD: "5000.00" } });
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it("getBalance with a currency: that balance; after an order, less by the order's price", async () => {
    const balance = await client.getBalance("USD");
    expect(balance).toEqual({ balance: "5000.00", currency: "USD" });
    const result = await client.createOrder(validOrder(sandbox), {
      idempotencyKey: newKey(),
      executionMode: "sync",
    });
    if (result.kind !== "completed") throw new Error("expected a completed order");
    const price = Number(result.order.items[0]!.price);
    expect(price).toBeGreaterThan(0);
    const after = await client.getBalance("USD");
    expect(Number(after.balance)).toBeCloseTo(5000 - price, 2);
  });

  it("getBalance without a currency: the list, as the sandbox holds it", async () => {
    const list = await client.getBalance();
    expect(Array.isArray(list)).toBe(true);
    expect(list).toEqual(sandbox.state.book.allBalances(sandbox.state.catalog));
    expect(list.map((b) => b.currency)).toContain("USD");
    for (const b of list) expect(b.balance).toMatch(/^\d+\.\d{2}$/);
  });

  it("sends X-Api-Version when configured, and returns the version the service applied", async () => {
    const sent: (string | null)[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers).get("x-api-version"));
      return fetch(input, init);
    };
    const versioned = clientOf(sandbox, { apiVersion: LATEST_VERSION, fetch: recording });
    const answer = await versioned.request({ method: "GET", path: "/v2/ping" });
    expect(answer).toEqual({ status: 200, body: { message: "pong" }, apiVersion: LATEST_VERSION });
    await versioned.getBalance("USD");
    expect(sent).toEqual([LATEST_VERSION, LATEST_VERSION]);

    const unversioned = clientOf(sandbox, { fetch: recording });
    const plain = await unversioned.request({ method: "GET", path: "/v2/ping" });
    // Without a version the account's stored one applies; the sandbox's is the latest.
    expect(plain.apiVersion).toBe(LATEST_VERSION);
    expect(sent.at(-1)).toBeNull();
  });

  it("a raw X-Api-Version header given to request() wins over the configured one", async () => {
    const versioned = clientOf(sandbox, { apiVersion: "2099-01-01" });
    const answer = await versioned.request({
      method: "GET",
      path: "/v2/ping",
      headers: { "x-api-version": LATEST_VERSION },
    });
    expect(answer.apiVersion).toBe(LATEST_VERSION);
  });

  it("accepts a base URL ending in /v2 or a slash", async () => {
    for (const baseUrl of [`${sandbox.url}/v2`, `${sandbox.url}/`, `${sandbox.url}/v2/`]) {
      const answer = await clientOf(sandbox, { baseUrl }).request({
        method: "GET",
        path: "/v2/ping",
      });
      expect(answer.body).toEqual({ message: "pong" });
    }
  });

  it("getProduct: the product exactly as the catalog holds it", async () => {
    const product = sandbox.state.catalog.products[17]!;
    expect(await client.getProduct(product.code)).toEqual(product);
  });
});
