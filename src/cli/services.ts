import { Queue } from "bullmq";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import type { ApiClient } from "../api/client.js";
import { apiClientFor } from "../api/client-for-config.js";
import { ApiError } from "../api/errors/index.js";
import { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Config } from "../config.js";
import { openCurrentDatabase } from "../db/migrations.js";
import type { Database } from "../db/open-database.js";
import { UserError } from "../errors/user-error.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import { isRedisAway } from "../redis/outage-reporter.js";
import { assertRedisAnswers, RedisDownError } from "../redis/redis-down.js";

/** Redis, the ledger, the orders queue and the API client, opened together and closed together. */
export interface Services {
  redis: RedisConnection;
  ledger: Ledger;
  /** The workers alive (their beats): a running campaign no worker serves is stalled. */
  workers: WorkerBeats;
  ordersQueue: Queue<OrderJobData>;
  client: ApiClient;
  /**
   * PostgreSQL when GIFTJOBS_DATABASE_URL is set, its schema checked: the order journal and
   * the product overrides are kept there (docs/catalog-database.md, "The order journal and
   * product overrides").
   */
  database?: Database;
  close(): Promise<void>;
}

/**
 * Whether a command needs PostgreSQL (when GIFTJOBS_DATABASE_URL is set): `required` (an import,
 * orders retry: the journal is there) refuses to start without it; `redis-only` (orders status,
 * list, the lifecycle steps, report: they read and change Redis alone) goes on without it after
 * one warning line (docs/operations.md, "PostgreSQL down").
 */
export type DatabaseNeed = "required" | "redis-only";

export async function openServices(
  config: Config,
  need: DatabaseNeed = "required",
): Promise<Services> {
  const database = config.databaseUrl
    ? need === "required"
      ? await openCurrentDatabase(config)
      : await warnIfDatabaseAway(config)
    : undefined;
  try {
    return await openRedisServices(config, database);
  } catch (error) {
    await database?.close().catch(() => {});
    throw error;
  }
}

async function openRedisServices(
  config: Config,
  database: Database | undefined,
): Promise<Services> {
  const redis = connectRedis(config);
  redis.on("error", () => {
    // Reported by assertRedisAnswers or the failing command; no unhandled-error noise.
  });
  await assertRedisAnswers(redis, config).catch(async (error) => {
    redis.disconnect();
    throw error;
  });
  const ordersQueue = new Queue<OrderJobData>(QUEUES.orders, {
    connection: redis,
    prefix: config.prefix,
  });
  // Its errors are the connection's (see above): without a listener BullMQ prints each one.
  ordersQueue.on("error", () => {});
  return {
    redis,
    ledger: new Ledger(commandClient(redis), config.prefix),
    workers: new WorkerBeats(commandClient(redis), config.prefix),
    ordersQueue,
    client: apiClientFor(config),
    ...(database ? { database } : {}),
    close: async () => {
      try {
        await ordersQueue.close();
        await redis.quit();
      } finally {
        await database?.close();
      }
    },
  };
}

/**
 * withServices for a command that reads and changes Redis alone (orders status, list, report,
 * approve, pause, resume, cancel): PostgreSQL away or refusing is one warning line, not a refusal.
 */
export function withRedisServices<T>(
  config: Config,
  fn: (services: Services) => Promise<T>,
): Promise<T> {
  return withServices(config, fn, "redis-only");
}

/**
 * A command that reads Redis only checks PostgreSQL all the same, and says in one line on stderr
 * when it is away or refuses: an operator sees it before an import or a worker refuses. The
 * command does not use it, so nothing is kept open.
 */
async function warnIfDatabaseAway(config: Config): Promise<undefined> {
  try {
    const database = await openCurrentDatabase(config);
    await database.close().catch(() => {});
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    process.stderr.write(
      `giftjobs: warning: ${error.message}; this command reads Redis only and goes on (imports, workers and the webhook receiver refuse until it is fixed)\n`,
    );
  }
  return undefined;
}

/** Runs `fn` with services open, closing them whatever happens. */
export async function withServices<T>(
  config: Config,
  fn: (services: Services) => Promise<T>,
  need: DatabaseNeed = "required",
): Promise<T> {
  const services = await openServices(config, need);
  let result: T;
  try {
    result = await fn(services);
  } catch (error) {
    const lost = redisLost(services.redis, error);
    // The failure is what matters: a close that fails too (Redis gone) must not replace it.
    await services.close().catch(() => undefined);
    throw lost ? new RedisDownError(config, { cause: error }) : error;
  }
  await services.close();
  return result;
}

/**
 * True when `error` is ioredis giving up on a command because Redis went away meanwhile: the
 * command then fails in the same plain line as at its start (RedisDownError), not in ioredis's
 * words. The service's own network errors (an ApiError), and errors already told in words, are
 * left as they are.
 */
function redisLost(redis: RedisConnection, error: unknown): boolean {
  if (error instanceof UserError || error instanceof ApiError) return false;
  return redis.status !== "ready" && isRedisAway(error);
}
