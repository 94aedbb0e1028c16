import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { WorkerQueue } from "../../worker/worker-options.js";
import { lazyActions } from "../lazy-action.js";
import { portNumber, positiveWhole } from "../option-parsers.js";

const run = lazyActions(() => import("../commands/worker.js"));

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

/** Registers `worker`. */
export function register(program: Command): void {
  program
    .command("worker")
    .description("Process order and catalog jobs until SIGINT/SIGTERM.")
    .option(
      "--concurrency <n>",
      "requests in flight at once per queue (orders at the service; catalog syncs)",
      positiveWhole,
      10,
    )
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
    .option(
      "--webhooks",
      "webhooks deliver order ends (also GIFTJOBS_WEBHOOKS=1): index accepted orders, poll later",
    )
    .option(
      "--webhook-port <port>",
      "also receive the webhooks here (implies --webhooks; secret in GIFTJOBS_WEBHOOK_SECRET)",
      portNumber,
    )
    .option("--webhook-host <host>", "interface for --webhook-port", "127.0.0.1")
    .option(
      "--webhook-poll-delay <ms>",
      "with webhooks on: first poll of an accepted async order, the safety net",
      positiveWhole,
      30000,
    )
    .action(run("runWorker"));
}
