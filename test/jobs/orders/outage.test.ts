import type { Job, Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import type { OrderJobData } from "../../../jobs/orders/job.js";
import { OutageHold } from "../../../jobs/orders/outage.js";
import { processCreateOrder } from "../../../jobs/orders/process.js";
import { RateLimitBackoff } from "../../../jobs/orders/rate-limit.js";
import type { ApiClient } from "../../../src/api/client.js";
import { ApiError, nothingSent, ServiceUnreachableError } from "../../../src/api/errors/index.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import { oneRowOrders } from "../../helpers/ledger-fixtures.js";
import { orderDeps } from "../../helpers/order-deps.js";
import { useRedisPrefix } from "../../helpers/redis-prefix.js";

const refused = () =>
  new ServiceUnreachableError({
    url: "http://127.0.0.1:4010",
    reason: "connection refused by 127.0.0.1:4010",
    type: "connection_refused",
  });
const notFound = () =>
  new ServiceUnreachableError({
    url: "http://nowhere.invalid",
    reason: "host nowhere.invalid not found",
    type: "host_not_found",
  });
const timeout = () =>
  new ApiError("RequestTimeoutError", {
    status: 0,
    type: "request_timeout",
    message: "POST /v2/order: no response within 5000 ms",
  });

describe("nothing sent", () => {
  it("is a connection refused or a host not found, never a timeout, a reset or a 5xx", () => {
    expect(nothingSent(refused())).toBe(true);
    expect(nothingSent(notFound())).toBe(true);
    expect(nothingSent(refused().afterTries(3))).toBe(true);
    expect(nothingSent(timeout())).toBe(false);
    expect(
      nothingSent(
        new ApiError("NetworkError", { status: 0, type: "network_error", message: "ECONNRESET" }),
      ),
    ).toBe(false);
    expect(
      nothingSent(
        new ApiError("ServerError", { status: 503, type: "service_unavailable", message: "x" }),
      ),
    ).toBe(false);
    expect(nothingSent(new Error("connection_refused"))).toBe(false);
  });
});

describe("OutageHold", () => {
  it("holds from the base, doubling per hold, capped; requests of one hold share it", () => {
    const hold = new OutageHold(() => false, 1000, 5000);
    expect(hold.next(0)).toBe(1000);
    expect(hold.next(400)).toBe(600); // the hold in force
    expect(hold.next(1000)).toBe(2000);
    expect(hold.next(3000)).toBe(4000);
    expect(hold.next(7000)).toBe(5000);
    expect(hold.next(12_000)).toBe(5000);
    expect(hold.current(13_000)).toBe(4000);
    hold.reset();
    expect(hold.current(13_000)).toBe(1000);
    expect(hold.next(13_000)).toBe(1000);
  });

  it("while the service is down, lets one job out at a time", () => {
    let down = false;
    const hold = new OutageHold(() => down);
    expect([hold.admit(), hold.admit()]).toEqual(["send", "send"]);
    down = true;
    expect([hold.admit(), hold.admit()]).toEqual(["probe", "wait"]);
    hold.probed();
    expect(hold.admit()).toBe("probe");
  });
});

describe("an order job when the service does not answer", () => {
  const r = useRedisPrefix("outage");

  /** A stub job and queue: this test is about the processor's decisions, not BullMQ. */
  function stubJob(attemptsMade: number, attempts: number) {
    const moved: number[] = [];
    const job = {
      id: "c.1",
      data: { campaign: "c", order: 1, executionMode: "async" } as OrderJobData,
      attemptsMade,
      opts: { attempts },
      moveToDelayed: async (at: number) => {
        moved.push(at);
      },
      updateData: async () => {},
    } as unknown as Job<OrderJobData>;
    return { job, moved };
  }

  async function run(
    errors: Error[],
    options: { attemptsMade?: number; attempts?: number; down?: boolean; blips?: number } = {},
  ) {
    const ledger = new Ledger(r.redis, r.prefix);
    await ledger.orders.record("c", oneRowOrders("c", ["a"]));
    const sent: string[] = [];
    const client = {
      createOrder: async (_body: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
        sent.push(idempotencyKey);
        throw errors[Math.min(sent.length - 1, errors.length - 1)];
      },
    } as unknown as ApiClient;
    const holds: number[] = [];
    const queue = {
      rateLimit: async (ms: number) => {
        holds.push(ms);
      },
    } as unknown as Queue<OrderJobData>;
    const { job, moved } = stubJob(options.attemptsMade ?? 0, options.attempts ?? 8);
    const held: string[] = [];
    const deps = orderDeps(ledger, {
      service: { client, blipRetries: options.blips ?? 0 },
      queue: {
        ordersQueue: queue,
        rateLimiter: new RateLimitBackoff(1),
        outageHold: new OutageHold(() => options.down ?? false, 1000, 30_000),
      },
      observers: { onHeld: (campaign) => held.push(campaign) },
    });
    const outcome = await processCreateOrder(job, deps, { token: "token" }).catch((e: Error) => e);
    return { outcome, moved, holds, held, sent, order: await ledger.orders.getOrder("c", 1) };
  }

  it("a refused connection: back to wait unsent-marked, no attempt used, the queue held", async () => {
    const { outcome, moved, holds, order } = await run([refused()], {
      attemptsMade: 7,
      attempts: 8,
    });
    // DelayedError: BullMQ moves on without counting an attempt, even the last one.
    expect((outcome as Error).name).toBe("DelayedError");
    expect(moved).toHaveLength(1);
    expect(holds).toEqual([1000]);
    expect(order).toMatchObject({ status: "queued", error_type: "connection_refused" });
    expect(order?.unclear).toBeUndefined();
  });

  it("a host not found: the same", async () => {
    const { outcome, order } = await run([notFound()]);
    expect((outcome as Error).name).toBe("DelayedError");
    expect(order).toMatchObject({ status: "queued", error_type: "host_not_found" });
    expect(order?.unclear).toBeUndefined();
  });

  it("a timeout, then a refused connection in the same attempt: the mark stays", async () => {
    // The in-attempt retry of a blip: the timed-out request may have reached the service.
    const { outcome, order, sent } = await run([timeout(), refused()], { blips: 1 });
    expect(sent).toHaveLength(2);
    expect((outcome as Error).name).toBe("DelayedError");
    expect(order).toMatchObject({ status: "queued", unclear: "request_timeout" });
  });

  it("a timeout before the outage is known: an attempt is used, the key marked, as ever", async () => {
    const { outcome, moved, order } = await run([timeout()]);
    expect(outcome).toMatchObject({ name: "RequestTimeoutError" });
    expect(moved).toEqual([]);
    expect(order).toMatchObject({ status: "queued", unclear: "request_timeout" });
  });

  it("a timeout on the last attempt while the service is known down: put back, marked, not failed_uncertain", async () => {
    const { outcome, moved, holds, order } = await run([timeout()], {
      attemptsMade: 7,
      attempts: 8,
      down: true,
    });
    expect((outcome as Error).name).toBe("DelayedError");
    expect(moved).toHaveLength(1);
    expect(holds).toEqual([1000]);
    expect(order).toMatchObject({ status: "queued", unclear: "request_timeout" });
  });

  it("a timeout on the last attempt with the service answering others: failed_uncertain, as ever", async () => {
    const { outcome, order } = await run([timeout()], { attemptsMade: 7, attempts: 8 });
    expect(outcome).toMatchObject({ status: "failed_uncertain" });
    expect(order).toMatchObject({ status: "failed_uncertain", unclear: "request_timeout" });
  });

  it("while another job probes a service known down, a job waits unsent and the ledger is untouched", async () => {
    const ledger = new Ledger(r.redis, r.prefix);
    await ledger.orders.record("c", oneRowOrders("c", ["a"]));
    const hold = new OutageHold(() => true, 1000, 30_000);
    expect(hold.admit()).toBe("probe");
    const holds: number[] = [];
    const held: string[] = [];
    const { job, moved } = stubJob(0, 8);
    const deps = orderDeps(ledger, {
      queue: {
        ordersQueue: {
          rateLimit: async (ms: number) => holds.push(ms),
        } as unknown as Queue<OrderJobData>,
        rateLimiter: new RateLimitBackoff(1),
        outageHold: hold,
      },
      observers: { onHeld: (campaign) => held.push(campaign) },
    });
    const outcome = await processCreateOrder(job, deps, { token: "token" }).catch((e: Error) => e);
    expect((outcome as Error).name).toBe("DelayedError");
    expect(moved).toHaveLength(1);
    expect(holds).toEqual([1000]);
    expect(held).toEqual(["c"]);
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "queued" });
    expect((await ledger.orders.getOrder("c", 1))?.attempts).toBeUndefined();
  });
});
