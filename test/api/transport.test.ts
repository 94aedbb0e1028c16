import { afterAll, describe, expect, it } from "vitest";
import { type ApiError, ServiceUnreachableError } from "../../src/api/errors/index.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { clientOf, rejectionOf, start, validOrder } from "../helpers/api-client.js";
import { newKey, sandboxOrders, stats } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait-for.js";

/** Transport failures, each on a sandbox of its own (they need faults that would slow the rest). */
describe("transport failures are retry-same-key", () => {
  const sandboxes: Sandbox[] = [];
  afterAll(() => Promise.all(sandboxes.map((s) => s.close())));
  async function own(options: Parameters<typeof start>[0]) {
    const sandbox = await start(options);
    sandboxes.push(sandbox);
    return sandbox;
  }

  it("a dropped connection: NetworkError, yet the order exists; the same key replays it", async () => {
    const sandbox = await own({ dropRate: 1 });
    const client = clientOf(sandbox);
    const key = newKey("drop");
    const order = validOrder(sandbox);
    const error = await rejectionOf(client.createOrder(order, { idempotencyKey: key }));
    expect(error).toMatchObject({ name: "NetworkError" });
    const network = error as ApiError;
    expect(network).toMatchObject({ status: 0, type: "network_error", outcome: "retry-same-key" });
    expect(network.message).toContain("POST /v2/order");
    const made = (await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key);
    expect(made).toHaveLength(1);
    expect((await stats(sandbox)).requests["POST /v2/order"]).toEqual({ dropped: 1 });

    // The retry with the same key: the recorded answer, not a second order.
    sandbox.setFaults({ dropRate: 0 });
    const retried = await client.createOrder(order, { idempotencyKey: key });
    expect(retried.order.id).toBe(made[0]!.id);
    expect((await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key)).toHaveLength(1);
  });

  it("a server that does not answer in time: RequestTimeoutError", async () => {
    const sandbox = await own({ latencyMs: 3000 });
    const client = clientOf(sandbox, { timeoutMs: 150 });
    const error = await rejectionOf(client.getBalance("USD"));
    expect(error).toMatchObject({ name: "RequestTimeoutError" });
    expect(error).toMatchObject({ status: 0, type: "request_timeout", outcome: "retry-same-key" });
    expect(error.message).toContain("150 ms");

    const order = await rejectionOf(
      client.createOrder(validOrder(sandbox), { idempotencyKey: newKey() }),
    );
    expect(order).toMatchObject({ name: "RequestTimeoutError" });
    expect((order as ApiError).outcome).toBe("retry-same-key");
  });

  it("an AbortSignal cancels a request in flight: NetworkError aborted, not a timeout", async () => {
    const sandbox = await own({ latencyMs: 3000 });
    const client = clientOf(sandbox);
    const controller = new AbortController();
    const pending = rejectionOf(
      client.createOrder(validOrder(sandbox), {
        idempotencyKey: newKey(),
        signal: controller.signal,
      }),
    );
    // Abort once the sandbox holds the request, so the abort surely cuts a request in flight.
    await waitFor(async () => (sandbox.state.idempotency.size > 0 ? true : undefined));
    controller.abort();
    const error = await pending;
    expect(error).toMatchObject({ name: "NetworkError" });
    expect(error).toMatchObject({ type: "aborted", outcome: "retry-same-key" });
    expect(error.message).toContain("cancelled");
  });

  it("an AbortSignal already aborted: nothing is sent", async () => {
    const sandbox = await own({});
    const client = clientOf(sandbox);
    const error = await rejectionOf(client.listProducts({}, AbortSignal.abort()));
    expect(error).toMatchObject({ name: "NetworkError" });
    expect((error as ApiError).type).toBe("aborted");
    expect((await stats(sandbox)).total_requests).toBe(0);
  });

  it("a cancelled pages() loop stops with the abort", async () => {
    const sandbox = await own({ products: 60 });
    const client = clientOf(sandbox);
    const controller = new AbortController();
    const seen: number[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const page of client.pages({ limit: 10 }, controller.signal)) {
          seen.push(page.catalog.length);
          if (seen.length === 2) controller.abort();
        }
      })(),
    );
    expect(seen).toEqual([10, 10]);
    expect(error).toMatchObject({ name: "NetworkError" });
    expect((error as ApiError).type).toBe("aborted");
  });

  it("nothing listening: ServiceUnreachableError naming the URL, the host and the setting", async () => {
    const sandbox = await own({});
    const url = sandbox.url;
    await sandbox.close();
    sandboxes.splice(sandboxes.indexOf(sandbox), 1);
    const host = new URL(url).host;
    // User and password in the URL are left out of the message: they may be a secret.
    const withUser = url.replace("http://", "http://ops:hunter2@");
    const client = clientOf(sandbox, { baseUrl: `${withUser}/v2`, timeoutMs: 5000 });
    const error = await rejectionOf(client.getOrder("O-1"));
    expect(error).toBeInstanceOf(ServiceUnreachableError);
    expect(error).toMatchObject({
      name: "ServiceUnreachableError",
      status: 0,
      type: "connection_refused",
      outcome: "retry-same-key",
      url,
      tries: 1,
    });
    expect(error.message).toBe(
      `cannot reach the service at ${url} (connection refused by ${host}): is GIFTJOBS_API_URL right?`,
    );
    expect((error as ServiceUnreachableError).afterTries(3).message).toBe(
      `cannot reach the service at ${url} (connection refused by ${host}) after 3 tries: is GIFTJOBS_API_URL right?`,
    );
    expect(error.message).not.toMatch(/hunter2|sk-test/);
  });

  it("idempotency_in_progress: a second request with the key while the first runs", async () => {
    // Generous latency: the second request must surely arrive while the first still sleeps.
    const sandbox = await own({ latencyMs: 1500 });
    const client = clientOf(sandbox);
    const key = newKey("busy");
    const order = validOrder(sandbox);
    const first = client.createOrder(order, { idempotencyKey: key });
    // The key is taken as soon as the first request arrives, before its latency.
    await waitFor(async () => (sandbox.state.idempotency.size > 0 ? true : undefined));
    const error = await rejectionOf(client.createOrder(order, { idempotencyKey: key }));
    expect(error).toMatchObject({ name: "IdempotencyInProgressError" });
    expect(error).toMatchObject({
      status: 400,
      type: "idempotency_in_progress",
      outcome: "retry-same-key",
    });
    sandbox.setFaults({ latencyMs: 0 });
    const created = await first;
    // Once the first is done, the same key replays its order.
    const retried = await client.createOrder(order, { idempotencyKey: key });
    expect(retried.order.id).toBe(created.order.id);
  });
});
