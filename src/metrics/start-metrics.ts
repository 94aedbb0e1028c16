import { Queue } from "bullmq";
import type { Config } from "../config.js";
import type { WorkerHooks } from "../jobs/workers.js";
import type { Logger } from "../log.js";
import { silentLogger } from "../log.js";
import { Ledger } from "../orders/ledger.js";
import { commandClient, connectRedis } from "../queue/connection.js";
import { QUEUES } from "../queue/names.js";
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

/**
 * Serves the worker's metrics at `/metrics`. Queue depths come from every giftjobs queue under
 * the prefix, whichever queues this worker serves: one scrape shows the whole backlog.
 */
export async function startMetrics(options: StartMetricsOptions): Promise<RunningMetrics> {
  const { config } = options;
  const log = options.log ?? silentLogger;
  const redis = connectRedis(config);
  redis.on("error", () => {
    // A scrape reports it (the depth gauge logs); no unhandled-error noise per reconnect.
  });
  const queues = Object.values(QUEUES).map(
    (name) => new Queue(name, { connection: redis, prefix: config.prefix }),
  );
  const metrics = new WorkerMetrics({
    queues,
    ledger: new Ledger(commandClient(redis), config.prefix),
    log,
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
