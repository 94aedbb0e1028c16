import { ENV_NAMES } from "../config.js";
import { UserError } from "../errors/user-error.js";
import type { RedisConnection, RedisSettings } from "./connection.js";
import { redisAddress } from "./outage-reporter.js";

/**
 * What every command says when Redis does not answer, in plain words: where (host and port,
 * never the password the URL may hold), and the setting that says where
 * (docs/architecture/redis.md, "Redis outages").
 */
export function redisDownMessage(settings: RedisSettings): string {
  const setting = settings.redisClusterNodes ? ENV_NAMES.redisClusterNodes : ENV_NAMES.redisUrl;
  return `Redis at ${redisAddress(settings)} does not answer: is it running? (${setting})`;
}

/**
 * Redis does not answer a command that needs it: one line (`giftjobs: error: ...`, something
 * the operator fixes, hence a UserError) and exit 1, as for the other run-time failures, never
 * ioredis's own sentence.
 */
export class RedisDownError extends UserError {
  override readonly name = "RedisDownError";
  override readonly exitCode: number = 1;
  /** Read by isRedisAway: this error is Redis being away, told in plain words. */
  readonly code = "REDIS_DOWN";

  constructor(settings: RedisSettings, options?: ErrorOptions) {
    super(redisDownMessage(settings), options);
  }
}

/**
 * Resolves when Redis answers PING within `timeoutMs`; otherwise rejects with RedisDownError
 * (refused, timed out, out of retries: the operator's fix is the same), the cause kept for
 * GIFTJOBS_DEBUG's stack trace.
 */
export async function assertRedisAnswers(
  redis: RedisConnection,
  settings: string | RedisSettings,
  timeoutMs = 3000,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    const where = typeof settings === "string" ? { redisUrl: settings } : settings;
    throw new RedisDownError(where, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
