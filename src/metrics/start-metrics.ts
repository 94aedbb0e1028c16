import { Queue } from "bullmq";
import { QUEUES } from "../../jobs/registry.js";
import { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Config } from "../config.js";
import { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import { silentLogger } from "../log.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import type { WorkerHooks } from "../worker/worker-options.js";
import { startMetricsServer } from "./metrics-server.js";
import { WorkerMetrics } from "./worker-metrics.js";

/** Options of `startMetrics`. */
export interface StartMetricsOptions {
  config: Config;
  /** 0 picks a free port. */
  port: number;
  /** Interface to bind; Prometheus on another machine needs `0.0.0.0`. @defaultValue `127.0.0.1` */
  host?: string;
  /** @defaultValue silentLogger */
  log?: Logger;
}

/** A running metrics endpoint: pass `hooks` to `startWorkers` and to other API clients. */
export interface RunningMetrics {
  /** `http://host:port/metrics` */
  url: string;
  hooks: Required<WorkerHooks>;
  metrics: WorkerMetrics;
  close(): Promise<void>;
}

/** How long startMetrics waits for Redis before serving (giftjobs_redis_up 0 meanwhile). */
const READY_WAIT_MS = 2000;

/** Resolves when `redis` is ready, or after `ms` (Redis away: the endpoint serves anyway). */
function readyOrLate(redis: RedisConnection, ms: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  // Not events.once: it would reject on the "error" events of a Redis that is away.
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once("ready", done);
  });
}

/**
 * Serves the worker's metrics at `/metrics`. Queue depths come from every giftjobs queue under
 * the prefix, whichever queues this worker serves: one scrape shows the whole backlog.
 */
export async function startMetrics(options: StartMetricsOptions): Promise<RunningMetrics> {
  const { config } = options;
  const log = options.log ?? silentLogger;
  // Fails fast while Redis is away: a scrape answers at once (giftjobs_redis_up 0, the gauges
  // read from Redis left out) instead of waiting for reconnects past Prometheus's timeout.
  const redis = connectRedis(config, { failFast: true });
  redis.on("error", () => {
    // giftjobs_redis_up and the worker's outage line say it; no noise per reconnect.
  });
  // Without an offline queue, a scrape before the first connect would find nothing to read.
  await readyOrLate(redis, READY_WAIT_MS);
  const queues = Object.values(QUEUES).map((name) => {
    const queue = new Queue(name, { connection: redis, prefix: config.prefix });
    // Redis away: a scrape says so (giftjobs_redis_up); BullMQ would print each error otherwise.
    queue.on("error", () => {});
    return queue;
  });
  const metrics = new WorkerMetrics({
    queues,
    ledger: new Ledger(commandClient(redis), config.prefix),
    workers: new WorkerBeats(commandClient(redis), config.prefix),
    log,
    ping: () => redis.ping(),
  });
  const closeQueues = async () => {
    await Promise.all(queues.map((q) => q.close()));
    await redis.quit().catch(() => redis.disconnect());
  };
  try {
    const server = await startMetricsServer({
      registry: metrics.registry,
      port: options.port,
      host: options.host,
      log,
    });
    return {
      url: server.url,
      hooks: metrics.hooks,
      metrics,
      close: async () => {
        await server.close();
        await closeQueues();
      },
    };
  } catch (error) {
    await closeQueues();
    throw error;
  }
}
