// The definitions of `giftjobs sandbox`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { collect } from "../option-parsers.js";

const runSandbox = lazyActions(() => import("../commands/sandbox.js"));

/** Registers the `sandbox` command: the local service, for the demo, tests and benchmarks. */
export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description("Run the local sandbox of the service (in memory) until SIGINT/SIGTERM.")
    .option("--port <n>", "port to listen on (0: a free one)", "4010")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--products <n>", "number of generated products", "250")
    .option("--seed <s>", "seed of the generated catalog", "1")
    .option("--api-key <key>", "the only API key accepted (default: any non-empty key)")
    .option("--balance <CUR=AMOUNT>", "starting balance of a currency (repeatable)", collect, [])
    .option("--async-complete-ms <ms>", "time an async order stays PROCESSING (default 1000)")
    .option("--order-rate-limit <n>", "orders accepted per minute (default 300)")
    .option("--fail-rate <r>", "share of orders answered 500 before anything is done (0..1)")
    .option("--drop-rate <r>", "share of created orders whose connection is cut (0..1)")
    .option("--latency-ms <ms>", "delay of every /v2 request, with ±20% jitter")
    .option("--async-fail-rate <r>", "share of async orders that end FAILED (0..1)")
    .option("--webhook-url <url>", "POST order.completion and product.update webhooks here")
    .option("--webhook-secret <whsec>", "signing secret of the webhooks (whsec_ + base64)")
    .option("--webhook-duplicates <n>", "webhooks sent twice: a probability below 1, or a count")
    .option("--webhook-out-of-order <n>", "webhooks held back behind the next one (same forms)")
    .option("--webhook-drop <n>", "webhooks never sent (same forms)")
    .option("--webhook-delay-ms <ms>", "delay before each webhook's first attempt")
    .action(runSandbox("runSandbox"));
}
