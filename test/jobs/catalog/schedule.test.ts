import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CATALOG_SYNC_JOB_NAME,
  getCatalogSchedule,
  scheduleCatalogSync,
  unscheduleCatalogSync,
} from "../../../jobs/catalog/schedule.js";
import { QUEUES } from "../../../jobs/registry.js";
import { UserError } from "../../../src/errors/user-error.js";
import { withRedisLock } from "../../../src/redis/redis-lock.js";
import { testRedis, uniquePrefix } from "../../helpers/redis.js";

let prefix: string;
let redis: Redis;
const extra: Redis[] = [];

beforeEach(() => {
  prefix = uniquePrefix("catalog");
  redis = testRedis();
});

afterEach(async () => {
  for (const connection of extra.splice(0)) connection.disconnect();
  redis.disconnect();
});

async function pendingJobs(): Promise<{ name: string }[]> {
  const queue = new Queue(QUEUES.catalog, { connection: redis, prefix });
  try {
    return await queue.getJobs(["delayed", "waiting", "prioritized"]);
  } finally {
    await queue.close();
  }
}

async function schedulerCount(): Promise<number> {
  const queue = new Queue(QUEUES.catalog, { connection: redis, prefix });
  try {
    return await queue.getJobSchedulersCount();
  } finally {
    await queue.close();
  }
}

describe("the catalog schedule", () => {
  it("registers one scheduler with one pending job, however often it is registered", async () => {
    const first = await scheduleCatalogSync({ connection: redis, prefix, tz: "Europe/London" });
    expect(first).toMatchObject({ cron: "0 2 * * *", tz: "Europe/London" });
    expect(first.next!.getTime()).toBeGreaterThan(Date.now());
    await scheduleCatalogSync({ connection: redis, prefix, tz: "Europe/London" });
    await scheduleCatalogSync({ connection: redis, prefix, cron: "30 3 * * *", tz: "UTC" });
    expect(await schedulerCount()).toBe(1);
    const jobs = await pendingJobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.name).toBe(CATALOG_SYNC_JOB_NAME);
    expect(await getCatalogSchedule({ connection: redis, prefix })).toMatchObject({
      cron: "30 3 * * *",
      tz: "UTC",
    });
  });

  it("stays one scheduler and one job under 10 concurrent upserts from separate connections", async () => {
    const connections = Array.from({ length: 10 }, () => testRedis());
    extra.push(...connections);
    await Promise.all(
      connections.map((connection, i) =>
        scheduleCatalogSync({ connection, prefix, cron: i % 2 ? "0 2 * * *" : "0 4 * * *" }),
      ),
    );
    expect(await schedulerCount()).toBe(1);
    expect(await pendingJobs()).toHaveLength(1);
    // The lock was released by every holder.
    expect(await redis.exists(`${prefix}:lock:catalog-scheduler`)).toBe(0);
  });

  it("unschedules: no scheduler and no pending job remain", async () => {
    await scheduleCatalogSync({ connection: redis, prefix });
    expect(await unscheduleCatalogSync({ connection: redis, prefix })).toBe(true);
    expect(await schedulerCount()).toBe(0);
    expect(await pendingJobs()).toHaveLength(0);
    expect(await unscheduleCatalogSync({ connection: redis, prefix })).toBe(false);
  });

  it("refuses a bad cron or time zone, naming the flag", async () => {
    await expect(
      scheduleCatalogSync({ connection: redis, prefix, cron: "0 2 * *" }),
    ).rejects.toThrow(/--cron/);
    await expect(
      scheduleCatalogSync({ connection: redis, prefix, cron: "61 2 * * *" }),
    ).rejects.toThrow(UserError);
    await expect(
      scheduleCatalogSync({ connection: redis, prefix, tz: "Mars/Olympus_Mons" }),
    ).rejects.toThrow(/--tz/);
    expect(await schedulerCount()).toBe(0);
  });
});

describe("the Redis lock", () => {
  it("lets one holder in at a time and releases only its own token", async () => {
    const key = `${prefix}:lock:test`;
    let inside = 0;
    let most = 0;
    const connections = Array.from({ length: 5 }, () => testRedis());
    extra.push(...connections);
    await Promise.all(
      connections.map((connection) =>
        withRedisLock(connection, key, async () => {
          inside += 1;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
    // A holder whose lock expired and was taken by another must not delete the other's lock.
    await withRedisLock(redis, key, async () => {
      await redis.set(key, "someone-else");
    });
    expect(await redis.get(key)).toBe("someone-else");
  });
});
