import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { testRedis, uniquePrefix } from "./redis.js";

/**
 * One Redis connection for the file (or describe block) and a new prefix for each of its
 * tests, deleted after it by setup.ts. The object stays the same; its fields are the current
 * test's.
 */
export function useRedisPrefix(label: string): { redis: Redis; prefix: string } {
  const current = { prefix: "" } as { redis: Redis; prefix: string };
  beforeAll(() => {
    current.redis = testRedis();
  });
  beforeEach(() => {
    current.prefix = uniquePrefix(label);
  });
  afterAll(async () => {
    await current.redis.quit();
  });
  return current;
}
