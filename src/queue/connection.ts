import { Redis, type RedisOptions } from "ioredis";

/**
 * Opens an ioredis connection for BullMQ and the ledger. `maxRetriesPerRequest: null` is what
 * BullMQ workers require (blocking commands must not give up); other clients get a bounded
 * retry so that a dead Redis is reported instead of hanging.
 */
export function connectRedis(
  url: string,
  options: { forWorker?: boolean; lazy?: boolean } = {},
): Redis {
  const base: RedisOptions = {
    maxRetriesPerRequest: options.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: options.lazy ?? false,
    // Never log the URL: it may carry a password.
    connectionName: "giftjobs",
  };
  return new Redis(url, base);
}

/** Resolves when Redis answers PING, or rejects with one clear line. */
export async function assertRedisAnswers(
  redis: Redis,
  url: string,
  timeoutMs = 3000,
): Promise<void> {
  const safeUrl = url.replace(/\/\/[^@/]*@/, "//***@");
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new Error(
      `Redis does not answer at ${safeUrl} (GIFTJOBS_REDIS_URL): ${(error as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}
