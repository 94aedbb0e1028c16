import { randomBytes } from "node:crypto";
import type { RedisConnection } from "./connection.js";

/** Deletes the lock only if it still holds our token: an expired lock taken by another is left alone. */
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export interface RedisLockOptions {
  /** The lock expires after this long, so a crashed holder cannot block others for ever. @defaultValue 15000 */
  ttlMs?: number;
  /** How long to wait for the lock before giving up. @defaultValue 20000 */
  waitMs?: number;
  /** Pause between attempts while waiting. @defaultValue 25 */
  retryDelayMs?: number;
}

/** Thrown when the lock stays taken for longer than `waitMs`. */
export class LockTimeoutError extends Error {
  override readonly name = "LockTimeoutError";
}

/**
 * Runs `fn` while holding a Redis lock (SET NX PX with a random token; released by a
 * compare-and-delete script). Only one holder at a time across processes and machines,
 * as long as `fn` finishes within `ttlMs`.
 */
export async function withRedisLock<T>(
  redis: RedisConnection,
  key: string,
  fn: () => Promise<T>,
  options: RedisLockOptions = {},
): Promise<T> {
  const ttlMs = options.ttlMs ?? 15_000;
  const deadline = Date.now() + (options.waitMs ?? 20_000);
  const token = randomBytes(16).toString("hex");
  while ((await redis.set(key, token, "PX", ttlMs, "NX")) !== "OK") {
    if (Date.now() >= deadline) {
      throw new LockTimeoutError(`lock ${key} is still held by another process`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 25));
  }
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE, 1, key, token);
  }
}
