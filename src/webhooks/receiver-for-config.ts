import type { Config } from "../config.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import { openStores } from "../stores/stores.js";
import {
  type RunningReceiver,
  startWebhookReceiver,
  type WebhookReceiverOptions,
} from "./webhook-receiver.js";

/** What `startReceiverFor` takes beyond the config: the receiver's own options. */
export type ReceiverForConfigOptions = Omit<
  WebhookReceiverOptions,
  "redis" | "prefix" | "dataDir" | "productOverrides"
> & {
  /** Told of the receiver's connection before it is used (to watch it, or quiet its errors). */
  onConnection?: (redis: RedisConnection) => void;
};

/**
 * The receiver as `giftjobs webhooks` and `worker --webhook-port` run it: on a Redis connection
 * of its own, under the config's prefix and data dir, product states in PostgreSQL when
 * GIFTJOBS_DATABASE_URL is set (its schema checked first); closing it closes both.
 */
export async function startReceiverFor(
  config: Config,
  options: ReceiverForConfigOptions,
): Promise<RunningReceiver> {
  const { onConnection, ...receiverOptions } = options;
  const stores = await openStores(config);
  // Many messages at once, several commands each: one write per event-loop turn.
  const redis = connectRedis(config, { coalesceWrites: true });
  onConnection?.(redis);
  try {
    const ledger = new Ledger(commandClient(redis), config.prefix);
    const receiver = await startWebhookReceiver({
      ...receiverOptions,
      redis: commandClient(redis),
      prefix: config.prefix,
      dataDir: config.dataDir,
      productOverrides: stores.productOverrides(ledger),
    });
    return {
      ...receiver,
      close: async () => {
        await receiver.close();
        await redis.quit().catch(() => redis.disconnect());
        await stores.close();
      },
    };
  } catch (error) {
    redis.disconnect();
    await stores.close().catch(() => {});
    throw error;
  }
}
