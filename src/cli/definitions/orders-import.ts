import { type Command, Option } from "commander";
import { lazyActions } from "../lazy-action.js";
import { collect, wholeNumber } from "../option-parsers.js";

const run = lazyActions(() => import("../commands/orders-import.js"));

/** Registers `orders import`: its options, read at start-up; the import itself runs lazily. */
export function registerImport(orders: Command): void {
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
    .action(run("runImport"));
}
