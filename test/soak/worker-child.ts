// An order worker in a process of its own, configured by GIFTJOBS_* like `giftjobs worker`,
// for the soak test to SIGKILL mid-attempt (docs/architecture/keys-and-exactly-once.md, "Exactly
// once": a worker that dies after POST, before the ledger). Prints "ready" once it takes jobs; ends
// with its stdin, so it never outlives the test that started it. SOAK_WEBHOOK_POLL_MS set: webhooks
// on.
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { startWorkers } from "../../src/worker/start-workers.js";
import { SOAK_WORKERS } from "./worker-options.js";

process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
const poll = process.env.SOAK_WEBHOOK_POLL_MS;
const workers = await startWorkers({
  config: loadConfig(),
  log: silentLogger,
  queues: ["orders"],
  ...SOAK_WORKERS,
  webhooks: poll === undefined ? undefined : { firstPollDelayMs: Number(poll) },
});
// SIGTERM: as `giftjobs worker` does, the jobs under way finish, then the process ends.
process.once("SIGTERM", () => {
  void workers.close().finally(() => process.exit(0));
});
process.stdout.write("ready\n");
