// The definitions of `giftjobs webhooks`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { portNumber } from "../option-parsers.js";

const runWebhooks = lazyActions(() => import("../commands/webhooks.js"));

/** Registers `webhooks`: the receiver of the service's webhooks (src/webhooks). */
export function registerWebhooks(program: Command): void {
  program
    .command("webhooks")
    .description(
      "Receive the service's webhooks (order.completion, product.update) until SIGINT/SIGTERM; the secret comes from GIFTJOBS_WEBHOOK_SECRET.",
    )
    .requiredOption("--port <port>", "port to listen on (0: a free one)", portNumber)
    .option("--host <host>", "interface to listen on (behind a TLS proxy: 127.0.0.1)", "127.0.0.1")
    .option(
      "--metrics-port <port>",
      "serve Prometheus metrics at /metrics on this port",
      portNumber,
    )
    .option("--metrics-host <host>", "interface for --metrics-port", "127.0.0.1")
    .option("--store-payout-urls", "keep redemption links in the ledger (as worker does)")
    .action(runWebhooks("runWebhooks"));
}
