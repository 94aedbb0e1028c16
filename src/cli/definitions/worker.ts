// The definitions of `giftjobs worker`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import { type Command, InvalidArgumentError } from "commander";
import type { WorkerQueue } from "../../worker/worker-options.js";
import { WORKER_DEFAULTS } from "../../worker-defaults.js";
import { lazyActions } from "../lazy-action.js";
import { portNumber, positiveWhole } from "../option-parsers.js";

const runWorker = lazyActions(() => import("../commands/worker.js"));

function parseQueues(value: string): WorkerQueue[] {
  const names = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (name !== "orders" && name !== "catalog" && name !== "maintenance") {
      throw new InvalidArgumentError(
        `unknown queue "${name}" (use orders, catalog, maintenance, or a list of them)`,
      );
    }
  }
  if (names.length === 0) throw new InvalidArgumentError("name at least one queue");
  return names as WorkerQueue[];
}

/** Registers `worker`. */
export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description("Process order and catalog jobs until SIGINT/SIGTERM.")
    .option(
      "--concurrency <n>",
      "requests in flight at once per queue (orders at the service; catalog syncs)",
      positiveWhole,
      WORKER_DEFAULTS.concurrency,
    )
    .option(
      "--queues <list>",
      "queues to serve: orders, catalog, maintenance (the nightly forget and prune)",
      parseQueues,
      ["orders", "catalog", "maintenance"] as WorkerQueue[],
    )
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
      WORKER_DEFAULTS.lockDurationMs,
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
      WORKER_DEFAULTS.webhookPollDelayMs,
    )
    .action(runWorker("runWorker"));
}
