import type { ApiClient } from "../api/client.js";
import { ApiError } from "../api/errors/api-error.js";
import { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Config } from "../config.js";
import { UserError } from "../errors/user-error.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import { isRedisAway } from "../redis/outage-reporter.js";
import { assertRedisAnswers, RedisDownError } from "../redis/redis-down.js";
import { openStores, type Stores } from "../stores/stores.js";

/**
 * Redis and the ledger, opened together and closed together: what a command that reads and
 * changes Redis alone uses (orders status, list, report, approve, pause, resume, cancel).
 */
export interface RedisServices {
  redis: RedisConnection;
  ledger: Ledger;
  /** The workers alive (their beats): a running campaign no worker serves is stalled. */
  workers: WorkerBeats;
  close(): Promise<void>;
}

/** Redis, the ledger and the API client, opened together and closed together. */
export interface Services extends RedisServices {
  client: ApiClient;
  /**
   * The stores (src/stores/stores.ts): the data dir's files, or PostgreSQL when
   * GIFTJOBS_DATABASE_URL is set, its schema checked (docs/catalog-database.md).
   */
  stores: Stores;
}

/**
 * Services for a command that needs PostgreSQL when GIFTJOBS_DATABASE_URL is set (an import,
 * orders retry: the journal is there): it refuses to start without it.
 */
async function openServices(config: Config, given?: Stores): Promise<Services> {
  const stores = given ?? (await openStores(config));
  // Stores given are closed by whoever opened them, after the services.
  const closeStores = () => (given ? Promise.resolve() : stores.close());
  let services: RedisServices | undefined;
  try {
    services = await connectServices(config);
    // Loaded here, not at start-up: the commands of Redis alone do not use it.
    const { apiClientFor } = await import("../api/client-for-config.js");
    const redisServices = services;
    return {
      ...redisServices,
      client: apiClientFor(config),
      stores,
      close: async () => {
        try {
          await redisServices.close();
        } finally {
          await closeStores();
        }
      },
    };
  } catch (error) {
    await services?.close().catch(() => {});
    await closeStores().catch(() => {});
    throw error;
  }
}

/**
 * Services for a command that reads and changes Redis alone: it goes on without PostgreSQL
 * after one warning line when GIFTJOBS_DATABASE_URL is set and the database is away
 * (docs/operations.md, "PostgreSQL down").
 */
async function openRedisServices(config: Config): Promise<RedisServices> {
  if (config.databaseUrl) await warnIfDatabaseAway(config);
  return connectServices(config);
}

async function connectServices(config: Config): Promise<RedisServices> {
  const redis = connectRedis(config);
  redis.on("error", () => {
    // Reported by assertRedisAnswers or the failing command; no unhandled-error noise.
  });
  await assertRedisAnswers(redis, config).catch(async (error) => {
    redis.disconnect();
    throw error;
  });
  return {
    redis,
    ledger: new Ledger(commandClient(redis), config.prefix),
    workers: new WorkerBeats(commandClient(redis), config.prefix),
    close: async () => {
      await redis.quit();
    },
  };
}

/**
 * withServices for a command that reads and changes Redis alone (orders status, list, report,
 * approve, pause, resume, cancel): PostgreSQL away or refusing is one warning line, not a refusal.
 */
export function withRedisServices<T>(
  config: Config,
  fn: (services: RedisServices) => Promise<T>,
): Promise<T> {
  return using(config, openRedisServices(config), fn);
}

/**
 * A command that reads Redis only checks PostgreSQL all the same, and says in one line on stderr
 * when it is away or refuses: an operator sees it before an import or a worker refuses. The
 * command does not use it, so nothing is kept open.
 */
async function warnIfDatabaseAway(config: Config): Promise<void> {
  try {
    const stores = await openStores(config, { max: 1 });
    await stores.close().catch(() => {});
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    process.stderr.write(
      `giftjobs: warning: ${error.message}; this command reads Redis only and goes on (imports, workers and the webhook receiver refuse until it is fixed)\n`,
    );
  }
}

/**
 * Runs `fn` with services open, closing them whatever happens. An import opens its stores once
 * (its catalog check reads them first) and gives them here: they are used, and left open.
 */
export function withServices<T>(
  config: Config,
  fn: (services: Services) => Promise<T>,
  { stores }: { stores?: Stores } = {},
): Promise<T> {
  return using(config, openServices(config, stores), fn);
}

async function using<S extends RedisServices, T>(
  config: Config,
  opening: Promise<S>,
  fn: (services: S) => Promise<T>,
): Promise<T> {
  const services = await opening;
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

/**
 * Runs `fn` with a plain Redis connection, asked first whether it answers (RedisDownError when
 * not), disconnected after.
 */
export async function withRedis<T>(
  config: Config,
  fn: (redis: RedisConnection) => Promise<T>,
): Promise<T> {
  const redis = connectRedis(config);
  // Redis away is told once, by assertRedisAnswers or the failing command: no ioredis noise.
  redis.on("error", () => {});
  try {
    await assertRedisAnswers(redis, config);
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}
