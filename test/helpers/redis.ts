import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { cleanUpLater } from "./cleanup.js";

// No vitest import here: the benches import this file in their measuring children.

export const REDIS_URL = process.env.GIFTJOBS_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * A prefix of its own for one test: nothing it writes can meet another test's keys. setup.ts
 * deletes its keys (and those of `PREFIX-…` prefixes made from it) after the test that made it,
 * or after the file when made outside a test.
 */
export function uniquePrefix(label = "t"): string {
  const prefix = `gjtest-${label}-${randomBytes(5).toString("hex")}`;
  cleanUpLater(async () => {
    const redis = testRedis();
    try {
      await deleteKeys(redis, `${prefix}*`);
    } finally {
      await redis.quit();
    }
  });
  return prefix;
}

export function testRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/** Deletes every key under the prefix (BullMQ keys included). */
export async function cleanPrefix(redis: Redis, prefix: string): Promise<void> {
  await deleteKeys(redis, `${prefix}:*`);
}

/**
 * Loses every key under the prefix at once, as a Redis that restarts empty does: one script, so
 * workers that run meanwhile see all of it or none of it. (cleanPrefix goes a SCAN page at a
 * time: a write between pages can outlive it, a partial loss no restart makes.)
 */
export async function loseKeys(redis: Redis, prefix: string): Promise<void> {
  // A test Redis is standalone: a script may touch keys it was not given.
  await redis.eval(
    `local keys = redis.call('KEYS', ARGV[1])
for i = 1, #keys, 1000 do redis.call('UNLINK', unpack(keys, i, math.min(i + 999, #keys))) end
return #keys`,
    0,
    `${prefix}:*`,
  );
}

async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length) await redis.unlink(...keys);
  } while (cursor !== "0");
}

/** Redis server CPU seconds so far (user + system), for benches to show what Redis spent. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return field("used_cpu_user") + field("used_cpu_sys");
}
