// The definitions of `giftjobs catalog`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { DEFAULT_CATALOG_CRON } from "../../../jobs/catalog/job.js";
import { DEFAULT_KEEP, DEFAULT_MAX_SHRINK } from "../../catalog/sync-defaults.js";
import { lazyActions } from "../lazy-action.js";
import { collect } from "../option-parsers.js";

const runCatalog = lazyActions(() => import("../commands/catalog.js"));
const runCatalogSync = lazyActions(() => import("../commands/catalog-sync.js"));
const runCatalogSchedule = lazyActions(() => import("../commands/catalog-schedule.js"));
const runCatalogImportFiles = lazyActions(() => import("../commands/catalog-import-files.js"));

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
