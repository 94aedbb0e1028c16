import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { Config } from "../../config.js";
import { startWorkers, type WorkerQueue } from "../../jobs/workers.js";
import type { Logger } from "../../log.js";
import { type RunningMetrics, startMetrics } from "../../metrics/start-metrics.js";
import { portNumber, positiveWhole } from "../option-parsers.js";
import { action, createContext } from "../run-action.js";
import { untilSignal } from "../until-signal.js";

function parseQueues(value: string): WorkerQueue[] {
  const names = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (name !== "orders" && name !== "catalog") {
      throw new InvalidArgumentError(`unknown queue "${name}" (use orders, catalog or both)`);
    }
  }
  if (names.length === 0) throw new InvalidArgumentError("name at least one queue");
  return names as WorkerQueue[];
}

interface WorkerFlags {
  concurrency: number;
  queues: WorkerQueue[];
  storePayoutUrls?: boolean;
  metricsPort?: number;
  metricsHost: string;
  lockDuration: number;
}

/** Registers `worker`. */
export function register(program: Command): void {
  program
    .command("worker")
    .description("Process order and catalog jobs until SIGINT/SIGTERM.")
    .option("--concurrency <n>", "jobs in flight at once per queue", positiveWhole, 10)
    .option("--queues <list>", "queues to serve: orders, catalog", parseQueues, [
      "orders",
      "catalog",
    ] as WorkerQueue[])
    .option(
      "--store-payout-urls",
      "keep redemption links in the ledger (they are money in the open)",
    )
    .option(
      "--metrics-port <port>",
      "serve Prometheus metrics at /metrics on this port",
      portNumber,
    )
    .option("--metrics-host <host>", "interface for --metrics-port", "127.0.0.1")
    .option(
      "--lock-duration <ms>",
      "how soon a crashed worker's jobs are taken over by other workers",
      positiveWhole,
      30000,
    )
    .action(
      action(async (opts: WorkerFlags) => {
        const ctx = createContext();
        const metrics = await metricsIfAsked(opts, ctx.config, ctx.log);
        const running = await startWorkers({
          config: ctx.config,
          log: ctx.log,
          queues: opts.queues,
          concurrency: opts.concurrency,
          storePayoutUrls: opts.storePayoutUrls,
          lockDurationMs: opts.lockDuration,
          hooks: metrics?.hooks,
        }).catch(async (error) => {
          // An open metrics server would keep the process alive after the failure.
          await metrics?.close();
          throw error;
        });
        ctx.log.info(
          { queues: opts.queues, concurrency: opts.concurrency },
          "worker started; SIGINT or SIGTERM to stop",
        );
        await untilSignal();
        ctx.log.info("stopping: no new jobs; finishing the active ones");
        await running.close();
        await metrics?.close();
        ctx.log.info("worker stopped");
        return 0;
      }),
    );
}

async function metricsIfAsked(
  opts: WorkerFlags,
  config: Config,
  log: Logger,
): Promise<RunningMetrics | undefined> {
  if (opts.metricsPort === undefined) return undefined;
  const metrics = await startMetrics({
    config,
    port: opts.metricsPort,
    host: opts.metricsHost,
    log,
  });
  log.info({ url: metrics.url }, "serving metrics");
  return metrics;
}
