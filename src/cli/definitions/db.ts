// The definitions of `giftjobs db`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";

const runDb = lazyActions(() => import("../commands/db.js"));
const runDbImportJournals = lazyActions(() => import("../commands/db-import-journals.js"));

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
