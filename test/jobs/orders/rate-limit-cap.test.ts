import type { Job, Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { MAX_RATE_LIMITED } from "../../../jobs/orders/failures.js";
import type { OrderJobData } from "../../../jobs/orders/job.js";
import { processCreateOrder } from "../../../jobs/orders/process.js";
import { RateLimitBackoff } from "../../../jobs/orders/rate-limit.js";
import type { ApiClient } from "../../../src/api/client.js";
import { ApiError } from "../../../src/api/errors/index.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import { oneRowOrders } from "../../helpers/ledger-fixtures.js";
import { orderDeps } from "../../helpers/order-deps.js";
import { useRedisPrefix } from "../../helpers/redis-prefix.js";

describe("429 cap", () => {
  const r = useRedisPrefix("cap");

  // A stub job and queue: this unit test is about the processor's decision, not BullMQ.
  function stubJob(rateLimited: number) {
    const data: OrderJobData = {
      campaign: "c",
      order: 1,
      executionMode: "async",
      rateLimited,
    };
    return {
      id: "c.1",
      data,
      attemptsMade: 0,
      opts: { attempts: 5 },
      updateData: async (d: OrderJobData) => Object.assign(data, d),
    } as unknown as Job<OrderJobData>;
  }

  async function run(rateLimited: number) {
    const ledger = new Ledger(r.redis, r.prefix);
    await ledger.orders.record("c", oneRowOrders("c", ["a"]));
    const client = {
      createOrder: async () =>
        Promise.reject(
          new ApiError("RateLimitedError", {
            status: 429,
            type: "rate_limited",
            message: "rate exceeded",
          }),
        ),
    } as unknown as ApiClient;
    const queue = { rateLimit: async () => {} } as unknown as Queue;
    const job = stubJob(rateLimited);
    const deps = orderDeps(ledger, {
      service: { client, blipRetries: 1 },
      queue: { ordersQueue: queue, rateLimiter: new RateLimitBackoff(1) },
    });
    const outcome = await processCreateOrder(job, deps).catch((e: Error) => e);
    return { outcome, job, order: await ledger.orders.getOrder("c", 1) };
  }

  it("puts a rate-limited job back without using an attempt, counting the 429", async () => {
    const { outcome, job, order } = await run(3);
    expect((outcome as Error).message).toBe("bullmq:rateLimitExceeded");
    expect(job.data.rateLimited).toBe(4);
    expect(order?.status).toBe("queued");
  });

  it("past the cap, a 429 uses an attempt like any ambiguous outcome", async () => {
    const { outcome, order } = await run(MAX_RATE_LIMITED);
    expect(outcome).toMatchObject({ name: "RateLimitedError" });
    expect(order).toMatchObject({ status: "queued", error_type: "rate_limited" });
  });
});
