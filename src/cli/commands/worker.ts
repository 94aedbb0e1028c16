import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { createCatalogSyncProcessor } from "../../../jobs/catalog-sync.js";
import { startWorkers, type WorkerQueue } from "../../queue/workers.js";
import { action, createContext } from "../run-action.js";
import { apiClient } from "../services.js";

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

function positive(value: string): number {
  if (!/^[1-9]\d*$/.test(value))
    throw new InvalidArgumentError("must be a whole number of at least 1");
  return Number(value);
}

/** Registers `worker`. */
export function register(program: Command): void {
  program
    .command("worker")
    .description("Process order and catalog jobs until SIGINT/SIGTERM.")
    .option("--concurrency <n>", "jobs in flight at once per queue", positive, 10)
    .option("--queues <list>", "queues to serve: orders, catalog", parseQueues, [
      "orders",
      "catalog",
    ] as WorkerQueue[])
    .option(
      "--store-payout-urls",
      "keep redemption links in the ledger (they are money in the open)",
    )
    .action(
      action(
        async (opts: { concurrency: number; queues: WorkerQueue[]; storePayoutUrls?: boolean }) => {
          const ctx = createContext();
          const running = await startWorkers({
            config: ctx.config,
            log: ctx.log,
            queues: opts.queues,
            concurrency: opts.concurrency,
            storePayoutUrls: opts.storePayoutUrls,
            catalogProcessor: createCatalogSyncProcessor({
              client: apiClient(ctx.config),
              dataDir: ctx.config.dataDir,
              apiVersion: ctx.config.apiVersion,
              log: ctx.log,
            }),
          });
          ctx.log.info(
            { queues: opts.queues, concurrency: opts.concurrency },
            "worker started; SIGINT or SIGTERM to stop",
          );
          await untilSignal();
          ctx.log.info("stopping: no new jobs; finishing the active ones");
          await running.close();
          ctx.log.info("worker stopped");
          return 0;
        },
      ),
    );
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
