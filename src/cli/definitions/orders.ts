import { type Command, Option } from "commander";
import { lazyActions } from "../lazy-action.js";
import { collect, wholeNumber } from "../option-parsers.js";

const runImport = lazyActions(() => import("../commands/orders-import.js"));
const runStatus = lazyActions(() => import("../commands/orders-campaign.js"));
const runReport = lazyActions(() => import("../commands/orders-report.js"));
const runRetry = lazyActions(() => import("../commands/orders-retry.js"));
const runArchive = lazyActions(() => import("../commands/orders-archive.js"));
const runLifecycle = lazyActions(() => import("../commands/campaigns.js"));
const runLinks = lazyActions(() => import("../commands/orders-links.js"));
const runReconcile = lazyActions(() => import("../commands/orders-reconcile.js"));
const runTemplate = lazyActions(() => import("../commands/orders-template.js"));
const runForget = lazyActions(() => import("../commands/orders-forget.js"));

const rateOption = (value: string) => wholeNumber("--rate", value, 1, 6000);

/**
 * Registers `orders import|template|status|report|links|retry|reconcile|payouts` and the
 * campaign lifecycle: list, approve, pause, resume, cancel, archive, restore, forget.
 */
export function register(program: Command): void {
  const orders = program
    .command("orders")
    .description(
      "Order campaigns: import a CSV or .xlsx, follow, report, retry; a template to fill.",
    );
  registerImport(orders);
  orders
    .command("template")
    .description(
      "Write a ready-to-fill order file: the header and an example row from the catalog snapshot.",
    )
    .option(
      "--out <file>",
      "FILE.csv, or FILE.xlsx with a Products sheet of the snapshot's orderable products (default: CSV on stdout)",
    )
    .option("--country <CC>", "only products redeemable in this country")
    .option("--orderable", "list only the products an import accepts now (LIVE)")
    .action(runTemplate("runTemplate"));
  orders
    .command("status")
    .description("Rows of a campaign by status; --wait blocks until nothing is pending.")
    .requiredOption("--campaign <name>", "campaign name")
    .option("--wait", "wait until nothing is queued, in flight or submitted")
    .option("--timeout <seconds>", "give up waiting after this long (exit 124)", (value: string) =>
      wholeNumber("--timeout", value),
    )
    .option("--json", "print one JSON document")
    .action(runStatus("runStatus"));
  orders
    .command("report")
    .description("Write a CSV with one line per row: status, order and item ids, errors.")
    .requiredOption("--campaign <name>", "campaign name")
    .option(
      "--out <file>",
      "output file, - for stdout (default: DATA_DIR/campaigns/NAME/report.csv)",
    )
    .option("--json", "print one JSON document")
    .action(runReport("runReport"));
  orders
    .command("links")
    .description(
      "Write the payout links of a campaign's completed link rows to a new file (0600), " +
        "to hand out.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .requiredOption("--out <file>", "the file to create (never overwritten)")
    .option("--all", "every completed row's link, not only link rows' (e.g. to send one again)")
    .option("--json", "print one JSON document")
    .action(runLinks("runLinks"));
  orders
    .command("retry")
    .description(
      "Re-queue failed_uncertain rows under their SAME keys; --new-key moves failed_final rows to a new generation.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .option(
      "--new-key",
      "retry failed_final rows under the next generation's key (nothing was made for them)",
    )
    .option(
      "--include-uncertain",
      "with --new-key, also failed_uncertain rows (and failed_final ones whose key had an unclear attempt): an order may exist for them, so this could pay twice",
    )
    .option(
      "--any-api-key",
      "without --new-key: send failed_uncertain rows under their same keys even when their unclear attempt was made with another API key",
    )
    // The old spelling of both, refused with the flag it became (runRetry).
    .addOption(new Option("--force").hideHelp())
    .option(
      "--allow-repeats",
      "with --new-key, also rows another campaign has paid the same person the same card since",
    )
    .option("--json", "print one JSON document")
    .action(runRetry("runRetry"));
  orders
    .command("reconcile")
    .description(
      "Compare the service's orders with the campaign's ledger; settle failed_uncertain rows.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .option(
      "--rate <per-minute>",
      "requests to the service per minute at most (default 300)",
      rateOption,
    )
    .option(
      "--min-age <minutes>",
      "record a failed_uncertain order absent only if its last attempt is this old (default 15)",
      (value: string) => wholeNumber("--min-age", value),
    )
    .option("--json", "print one JSON document")
    .action(runReconcile("runReconcile"));
  orders
    .command("payouts")
    .description(
      "Read each completed order's payout links again; record status and expiry per row.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .option("--unclaimed", "then list the rows whose link is still ACTIVE (CSV, no URLs)")
    .option(
      "--rate <per-minute>",
      "requests to the service per minute at most (default 300)",
      rateOption,
    )
    .option("--json", "print one JSON document")
    .action(runReconcile("runPayouts"));
  orders
    .command("list")
    .description("Every campaign: state, rows by status, money per currency, times, Redis memory.")
    .option("--json", "print one JSON document (an array)")
    .action(runLifecycle("runList"));
  campaignCommand(
    orders,
    "approve",
    "Start a held campaign: its orders are sent from now on.",
  ).action(runLifecycle("runApprove"));
  campaignCommand(
    orders,
    "pause",
    "Pause a running campaign: nothing more is sent until resumed.",
  ).action(runLifecycle("runPause"));
  campaignCommand(orders, "resume", "Resume a paused campaign.").action(runLifecycle("runResume"));
  campaignCommand(
    orders,
    "cancel",
    "Cancel a campaign for good: rows not yet sent become cancelled; sent orders are followed to their end.",
  ).action(runLifecycle("runCancel"));
  campaignCommand(
    orders,
    "archive",
    "Move a done (or cancelled and finished) campaign out of Redis into files: report, compact ledger, manifest. A tombstone stays.",
  ).action(runArchive("runArchive"));
  campaignCommand(
    orders,
    "restore",
    "Read an archived campaign back into Redis, as it was before the archive.",
  ).action(runArchive("runRestore"));
  orders
    .command("forget")
    .description(
      "Remove people's e-mails, references and names of ended campaigns; counts, money, ids and statuses stay.",
    )
    .option("--campaign <name>", "the ended campaign to forget")
    .option(
      "--ended-before <date>",
      "every ended campaign that ended before this date (2026-01-31: 00:00 UTC) or date-time with its zone",
    )
    .option("--dry-run", "say what would be forgotten; change nothing")
    .option("--yes", "forget without asking (scripts); without it a terminal must confirm")
    .option("--json", "print one JSON document")
    .action(runForget("runForget"));
}

/** `orders NAME --campaign N [--json]`: a step on an existing campaign. */
function campaignCommand(orders: Command, name: string, description: string): Command {
  return orders
    .command(name)
    .description(description)
    .requiredOption("--campaign <name>", "campaign name")
    .option("--json", "print one JSON document");
}

/** Registers `orders import`: its options, read at start-up; the import itself runs lazily. */
function registerImport(orders: Command): void {
  orders
    .command("import")
    .description(
      "Validate an order file (CSV, TSV or .xlsx) against the catalog snapshot and enqueue its rows.",
    )
    .argument("<file>", "CSV, TSV or .xlsx file with a header row")
    .requiredOption("--campaign <name>", "campaign name (letters, digits, . _ -)")
    .option("--dry-run", "validate and price only; nothing is recorded or enqueued")
    .option(
      "--skip-invalid",
      "enqueue the valid rows; write the invalid ones to an error file to fix and import again",
    )
    .option("--error-file <path>", "where --skip-invalid writes invalid rows (CSV)")
    .option(
      "--budget <amount[:CUR]>",
      "the most the campaign may cost in a currency (repeatable, one per currency); stored on it",
      collect,
    )
    .option("--yes", "import and send without asking")
    .option("--hold", "record the campaign held: nothing is sent until `orders approve`")
    .option("--append", "add this file's new rows to an existing campaign")
    .addOption(
      new Option(
        "--allow-repeats",
        "record rows that pay someone what another campaign paid them (refused by default)",
      ).conflicts("skipRepeats"),
    )
    .option("--skip-repeats", "leave out rows another campaign paid; record the others")
    .addOption(
      new Option("--execution-mode <mode>", "async or sync")
        .choices(["async", "sync"])
        .default("async"),
    )
    .option(
      "--items-per-order <n>",
      "rows packed per order (1..200, async only)",
      (value: string) => wholeNumber("--items-per-order", value),
    )
    .option("--template-id <id>", "template for rows without template_id")
    .addOption(
      new Option(
        "--distribution <how>",
        "how rows without a distribution column are sent: email (default), link (no e-mail: " +
          "you hand the link out) or recipient",
      ).choices(["email", "link", "recipient"]),
    )
    .option("--map <Header=field>", "map a source header to a field (repeatable)", collect)
    .option("--strict-columns", "refuse columns that map to no field instead of ignoring them")
    .option("--delimiter <char>", "field delimiter, e.g. ';'")
    .option(
      "--decimal-comma",
      "face_value uses ',' as its decimal mark (25,50); assumed with --delimiter ';'",
    )
    .option("--no-decimal-comma", "face_value uses '.' even in a ';'-separated file")
    .option(
      "--sheet <name>",
      "the sheet of an .xlsx workbook to read, hidden or not (default: the first visible one)",
    )
    .option(
      "--header-row <n>",
      "the line (in an .xlsx, the row) the header is on; rows above it are left out (default: found among the first 20)",
      (value: string) => wholeNumber("--header-row", value, 1),
    )
    .option(
      "--max-unzipped-mb <n>",
      "the most an .xlsx workbook may unpack to, in MB (default 200, with a check of how far each part unpacks)",
      (value: string) => wholeNumber("--max-unzipped-mb", value, 1),
    )
    .option("--currency <CUR>", "payment currency (required with --no-catalog-check)")
    .option("--no-catalog-check", "skip the preflight against the catalog snapshot")
    .option("--no-balance-check", "skip the check against the account balance")
    .option(
      "--allow-example",
      "import the example row of `orders template` (recipient@example.com) instead of refusing the file",
    )
    .option(
      "--from-report",
      "the file is a giftjobs report: import its failed_final and cancelled rows as new orders",
    )
    .option("--json", "print one JSON document")
    .action(runImport("runImport"));
}
