import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { ApiClient } from "../api/client.js";
import { apiClientFor } from "../api/client-for-config.js";
import type { Config } from "../config.js";
import { Ledger } from "../orders/ledger.js";
import type { OrderJobData } from "../orders/order-job.js";
import { assertRedisAnswers, connectRedis } from "../queue/connection.js";
import { QUEUES } from "../queue/names.js";

/** Redis, the ledger, the orders queue and the API client, opened together and closed together. */
export interface Services {
  redis: Redis;
  ledger: Ledger;
  ordersQueue: Queue<OrderJobData>;
  client: ApiClient;
  close(): Promise<void>;
}

export async function openServices(config: Config): Promise<Services> {
  const redis = connectRedis(config.redisUrl);
  redis.on("error", () => {
    // Reported by assertRedisAnswers or the failing command; no unhandled-error noise.
  });
  await assertRedisAnswers(redis, config.redisUrl).catch(async (error) => {
    redis.disconnect();
    throw error;
  });
  const ordersQueue = new Queue<OrderJobData>(QUEUES.orders, {
    connection: redis,
    prefix: config.prefix,
  });
  return {
    redis,
    ledger: new Ledger(redis, config.prefix),
    ordersQueue,
    client: apiClientFor(config),
    close: async () => {
      await ordersQueue.close();
      await redis.quit();
    },
  };
}

/** Runs `fn` with services open, closing them whatever happens. */
export async function withServices<T>(
  config: Config,
  fn: (services: Services) => Promise<T>,
): Promise<T> {
  const services = await openServices(config);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}
