import { importFileSnapshots } from "../../catalog/pg-import-files.js";
import { openCurrentDatabase } from "../../db/migrations.js";
import { UserError } from "../../errors/user-error.js";
import { plural } from "../../plural.js";
import { createContext, printJson } from "../run-action.js";

/** `catalog import-files`: the data dir's file snapshots copied into PostgreSQL. */
export async function runImportFiles(flags: { dataDir?: string; json?: boolean }): Promise<number> {
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
      if (!ctx.json)
        process.stderr.write(`imported ${name} (${products} ${plural(products, "product")})\n`);
    });
    if (ctx.json) printJson(result);
    else {
      process.stdout.write(
        `${result.imported.length} ${plural(result.imported.length, "snapshot")} imported from ${dataDir}, ${result.skipped.length} already in the database; current: ${result.current ?? "none"}\n`,
      );
    }
    return 0;
  } finally {
    await database.close();
  }
}
