// The definitions of every command but `orders` (orders.ts): names, arguments, options, the
// parsers of their values and help, loaded at start-up; each action imports its implementation
// from src/cli/commands/ when it runs. One module for them all: each module costs start-up time
// (docs/architecture/command-line.md, "Start-up").
import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_CATALOG_CRON } from "../../../jobs/catalog/job.js";
import { DEFAULT_KEEP, DEFAULT_MAX_SHRINK } from "../../catalog/sync-defaults.js";
import type { WorkerQueue } from "../../worker/worker-options.js";
import { WORKER_DEFAULTS } from "../../worker-defaults.js";
import { lazyActions } from "../lazy-action.js";
import { collect, portNumber, positiveWhole } from "../option-parsers.js";

const runSandbox = lazyActions(() => import("../commands/sandbox.js"));
const runCatalog = lazyActions(() => import("../commands/catalog.js"));
const runCatalogSync = lazyActions(() => import("../commands/catalog-sync.js"));
const runCatalogSchedule = lazyActions(() => import("../commands/catalog-schedule.js"));
const runCatalogImportFiles = lazyActions(() => import("../commands/catalog-import-files.js"));
const runWorker = lazyActions(() => import("../commands/worker.js"));
const runWebhooks = lazyActions(() => import("../commands/webhooks.js"));
const runDashboard = lazyActions(() => import("../commands/dashboard.js"));
const runDemo = lazyActions(() => import("../commands/demo.js"));
const runDoctor = lazyActions(() => import("../commands/doctor.js"));
const runDb = lazyActions(() => import("../commands/db.js"));
const runDbImportJournals = lazyActions(() => import("../commands/db-import-journals.js"));
const runAudit = lazyActions(() => import("../commands/audit.js"));

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

/** Registers `catalog sync|show|diff|schedule|unschedule|import-files`. */
export function registerCatalog(program: Command): void {
  const catalog = program
    .command("catalog")
    .description("Mirror the product catalog into local snapshots.");
  catalog
    .command("sync")
    .description("Fetch the whole catalog now and publish it as a new snapshot.")
    .option("--orderable-only", "only products that can be ordered")
    .option("--country <CC>", "only products redeemable in this country (repeatable)", collect, [])
    .option("--category <C>", "only products in this category (repeatable)", collect, [])
    .option(
      "--allow-shrink",
      `publish even if the catalog shrank by more than ${Math.round(DEFAULT_MAX_SHRINK * 100)}%`,
    )
    .option("--keep <N>", "snapshots to keep", String(DEFAULT_KEEP))
    .option("--json", "print one JSON document")
    .action(runCatalogSync("runSync"));
  catalog
    .command("show")
    .description(
      "List products of the current snapshot, with the product.update changes since the sync.",
    )
    .option("--code <C>", "only this product (or subscription plan) code")
    .option("--country <CC>", "only products redeemable in this country")
    .option(
      "--orderable",
      "only products an import takes (is_orderable, LIVE or TEMPORARILY_DEGRADED)",
    )
    .option(
      "--json",
      "print a JSON array of products (product_update: what a product.update changed)",
    )
    .action(runCatalog("runShow"));
  catalog
    .command("diff")
    .description("Show what the latest sync changed.")
    .option("--json", "print the diff as JSON")
    .action(runCatalog("runDiff"));
  catalog
    .command("schedule")
    .description("Register the nightly catalog-sync job scheduler (run by `giftjobs worker`).")
    .option("--cron <EXPR>", "cron expression", DEFAULT_CATALOG_CRON)
    .option("--tz <ZONE>", "IANA time zone of the cron expression", "UTC")
    .option("--json", "print one JSON document")
    .action(runCatalogSchedule("runSchedule"));
  catalog
    .command("unschedule")
    .description("Remove the catalog-sync job scheduler.")
    .option("--json", "print one JSON document")
    .action(runCatalogSchedule("runUnschedule"));
  catalog
    .command("import-files")
    .description(
      "Copy the data dir's file snapshots into PostgreSQL (GIFTJOBS_DATABASE_URL); safe to rerun.",
    )
    .option("--data-dir <DIR>", "the data dir whose catalog/ to read (default GIFTJOBS_DATA_DIR)")
    .option("--json", "print one JSON document")
    .action(runCatalogImportFiles("runImportFiles"));
}

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

/** Registers `dashboard`. */
export function registerDashboard(program: Command): void {
  const dashboard = program
    .command("dashboard")
    .description(
      "Serve the campaigns page and the queue dashboard (bull-board) until SIGINT/SIGTERM.",
    )
    .option("--port <port>", "port to listen on (0: any free port)", portNumber, 3000)
    .option(
      "--host <host>",
      "interface to bind (anything but loopback exposes the queues)",
      "127.0.0.1",
    )
    .option(
      "--public-host <name>",
      "a host name the dashboard is reached by (repeatable); other Host headers get 421",
      collect,
      [],
    )
    .option(
      "--allow-actions",
      "show the action buttons (approve, pause, resume, cancel, retry) on the campaign pages, and bull-board's retry and clean; off loopback they need GIFTJOBS_DASHBOARD_TOKEN or --users",
    )
    .option(
      "--users <file>",
      "named users (NAME:ROLES:ID:HASH lines, made by `dashboard add-user`): every page needs sign-in, each action its role; replaces GIFTJOBS_DASHBOARD_TOKEN",
    )
    .action(runDashboard("runDashboard"));
  // The parent's --users names the file: commander gives a parent's option to the parent
  // wherever it stands, so add-user reads it from there (src/cli/commands/dashboard.ts).
  dashboard
    .command("add-user")
    .description(
      "Add a user to the --users file with a new random token, printed once (only its scrypt hash is kept).",
    )
    .argument("<name>", "the person, as the audit trail shows them")
    .requiredOption(
      "--roles <roles>",
      "comma-separated: view (read), operate (pause, resume, cancel, retry), approve",
    )
    .action(runDashboard("runAddUser"));
}

/** Registers `demo`. */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("Run the whole product end to end on the embedded sandbox (no account needed).")
    .option("--rows <n>", "rows in the sample campaign", (v) => Number.parseInt(v, 10), 200)
    .option("--json", "print one JSON document")
    .action(runDemo("runDemoCommand"));
}

/** Registers `doctor`. */
export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "Check what production needs: Redis (every cluster node), noeviction, appendonly, memory, the service's URL and key, PostgreSQL when configured, the snapshot's age. Exit 0 when all hold.",
    )
    .option(
      "--max-snapshot-age <hours>",
      "a current catalog snapshot older than this fails",
      positiveWhole,
      26,
    )
    .option("--json", "print the checks as one JSON document")
    .action(runDoctor("runDoctorCommand"));
}

/** Registers `db migrate|status|import-journals`. */
export function registerDb(program: Command): void {
  const db = program
    .command("db")
    .description("The PostgreSQL schema of GIFTJOBS_DATABASE_URL: apply and list its migrations.");
  db.command("migrate")
    .description("Apply the pending migrations, in order, each in a transaction (safe to rerun).")
    .option("--json", "print one JSON document")
    .action(runDb("runMigrate"));
  db.command("status")
    .description("List applied and pending migrations; exit 1 unless the schema is current.")
    .option("--json", "print one JSON document")
    .action(runDb("runStatus"));
  // Moving to PostgreSQL: docs/operations.md, "Switching to PostgreSQL".
  db.command("import-journals")
    .description(
      "Copy the data dir's order journals (campaigns/NAME/orders.ndjson) into PostgreSQL; safe to rerun.",
    )
    .option("--data-dir <DIR>", "the data dir whose campaigns/ to read (default GIFTJOBS_DATA_DIR)")
    .option("--json", "print one JSON document")
    .action(runDbImportJournals("runImportJournals"));
}

/** `--since T`: a date or a time (ISO 8601); a date alone is its start, UTC. */
function sinceTime(value: string): Date {
  const time = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
    ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
    : Number.NaN;
  if (Number.isNaN(time))
    throw new InvalidArgumentError("not a date or time (e.g. 2024-05-01 or 2024-05-01T09:00:00Z)");
  return new Date(time);
}

/** Registers `audit` and `audit verify`: the audit trail (docs/architecture/audit.md). */
export function registerAudit(program: Command): void {
  const audit = program
    .command("audit")
    .description(
      "Show the audit trail: who imported, approved, paused, resumed, cancelled, retried, archived what, and when.",
    )
    .option("--campaign <name>", "only this campaign's entries")
    .option(
      "--since <time>",
      "only entries at or after this date or time (UTC unless it says)",
      sinceTime,
    )
    .option("--actor <name>", "only this actor's entries")
    .addOption(new Option("--json", "print a JSON array of the entries").conflicts("csv"))
    .option("--csv", "print the entries as CSV (cells a spreadsheet would run are neutralised)")
    .option(
      "--no-verify",
      "list the entries as stored, without checking the chain (forensics on a broken trail)",
    )
    .action(runAudit("runAudit"));
  audit
    .command("verify")
    .description(
      "Check the audit trail's hash chain, and that every campaign has its import entry: exit 1 naming the first break.",
    )
    .option("--json", "print one JSON document")
    .action(runAudit("runVerify"));
}
