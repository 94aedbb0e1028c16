import type { Command } from "commander";
import { importFileSnapshots } from "../../catalog/pg-import-files.js";
import { openCurrentDatabase } from "../../db/migrations.js";
import { UserError } from "../../errors/user-error.js";
import { action, createContext, printJson } from "../run-action.js";

async function runImportFiles(flags: { dataDir?: string; json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  if (!ctx.config.databaseUrl) {
    throw new UserError(
      "GIFTJOBS_DATABASE_URL is not set: import-files moves file snapshots into PostgreSQL",
    );
  }
  const dataDir = flags.dataDir ?? ctx.config.dataDir;
  const database = await openCurrentDatabase(ctx.config);
  try {
    const result = await importFileSnapshots(dataDir, database, (name, products) => {
      if (!ctx.json) process.stderr.write(`imported ${name} (${products} products)\n`);
    });
    if (ctx.json) printJson(result);
    else {
      process.stdout.write(
        `${result.imported.length} snapshots imported from ${dataDir}, ${result.skipped.length} already in the database; current: ${result.current ?? "none"}\n`,
      );
    }
    return 0;
  } finally {
    await database.close();
  }
}

/** Registers `catalog import-files` on the `catalog` command. */
export function registerImportFiles(catalog: Command): void {
  catalog
    .command("import-files")
    .description(
      "Copy the data dir's file snapshots into PostgreSQL (GIFTJOBS_DATABASE_URL); safe to rerun.",
    )
    .option("--data-dir <DIR>", "the data dir whose catalog/ to read (default GIFTJOBS_DATA_DIR)")
    .option("--json", "print one JSON document")
    .action(action(runImportFiles));
}
