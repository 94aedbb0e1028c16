import { createServer } from "node:http";
import { Queue } from "bullmq";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { silentLogger } from "../log.js";
import { closeServer, httpUrl, listen } from "../metrics/listen.js";
import { Ledger } from "../orders/ledger.js";
import { assertRedisAnswers, commandClient, connectRedis } from "../queue/connection.js";
import { QUEUES } from "../queue/names.js";
import { OutageReporter, redisAddress } from "../queue/outage-reporter.js";
import { campaignRoutes } from "./campaign-routes.js";
import { isLoopback, loopbackHostOnly } from "./host-guard.js";
import { escapeHtml } from "./html-escape.js";
import { queueBoard } from "./queue-board.js";

/** Where bull-board is mounted. */
export const BOARD_PATH = "/queues";

/** Options of `startDashboard`. */
export interface StartDashboardOptions {
  config: Config;
  /** 0 picks a free port. @defaultValue 3000 */
  port?: number;
  /** Interface to bind; anything but loopback shows the queues to the network. @defaultValue `127.0.0.1` */
  host?: string;
  /**
   * Retry failed jobs and clean finished ones in bull-board, and approve, pause, resume, retry
   * and cancel campaigns from their pages. @defaultValue false
   */
  allowActions?: boolean;
  /** @defaultValue silentLogger */
  log?: Logger;
}

export interface RunningDashboard {
  /** `http://host:port/`: the campaigns page; the queues are under `/queues`. */
  url: string;
  /** Stops listening, then closes the queues and Redis. */
  close(): Promise<void>;
}

/**
 * Serves the campaigns page (`/`, `/campaigns`, `/campaigns.json`), each campaign's page
 * (`/campaigns/NAME`, its report at `/campaigns/NAME/report.csv`) and bull-board for the giftjobs
 * queues (`/queues`) under the configured prefix.
 */
export async function startDashboard(options: StartDashboardOptions): Promise<RunningDashboard> {
  const { config } = options;
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? silentLogger;
  const redis = connectRedis(config);
  // Redis away: one line every few seconds (pages say so too), not an error per reconnect.
  const outage = new OutageReporter(redisAddress(config)).watch(redis);
  const queues = Object.values(QUEUES).map((name) => {
    const queue = new Queue(name, { connection: redis, prefix: config.prefix });
    queue.on("error", (error) => {
      if (!outage.failed(error)) log.error({ err: error }, "dashboard: queue error");
    });
    return queue;
  });
  const closeRedis = async () => {
    outage.close();
    await Promise.all(queues.map((q) => q.close()));
    await redis.quit().catch(() => redis.disconnect());
  };
  try {
    await assertRedisAnswers(redis, config);
    const app = dashboardApp({
      ledger: new Ledger(commandClient(redis), config.prefix),
      queues,
      allowActions: options.allowActions ?? false,
      loopbackOnly: isLoopback(host),
      log,
      outage,
    });
    const server = createServer(app);
    const port = await listen(server, options.port ?? 3000, host);
    return {
      url: httpUrl(host, port),
      close: async () => {
        await closeServer(server);
        await closeRedis();
      },
    };
  } catch (error) {
    await closeRedis();
    throw error;
  }
}

interface AppDeps {
  ledger: Ledger;
  queues: Queue[];
  allowActions: boolean;
  loopbackOnly: boolean;
  log: Logger;
  outage: OutageReporter;
}

function dashboardApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  if (deps.loopbackOnly) app.use(loopbackHostOnly);
  app.use(
    campaignRoutes({
      ledger: deps.ledger,
      boardPath: BOARD_PATH,
      allowActions: deps.allowActions,
      log: deps.log,
    }),
  );
  app.use(
    BOARD_PATH,
    queueBoard({ queues: deps.queues, basePath: BOARD_PATH, allowActions: deps.allowActions }),
  );
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
    if (!deps.outage.failed(error)) deps.log.error({ err: error }, "dashboard: request failed");
    res
      .status(500)
      .type("html")
      .send(`<p>giftjobs dashboard: ${escapeHtml(error.message)}</p>`);
  });
  return app;
}
