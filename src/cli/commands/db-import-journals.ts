import { openCurrentDatabase } from "../../db/migrations.js";
import { UserError } from "../../errors/user-error.js";
import { importFileJournals } from "../../orders/journal-import.js";
import { plural } from "../../plural.js";
import { createContext, printJson } from "../run-action.js";

/** `db import-journals`: the data dir's order journals copied into PostgreSQL. */
export async function runImportJournals(flags: {
  dataDir?: string;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  if (!ctx.config.databaseUrl) {
    throw new UserError(
      "GIFTJOBS_DATABASE_URL is not set: import-journals moves file journals into PostgreSQL",
    );
  }
  const dataDir = flags.dataDir ?? ctx.config.dataDir;
  const database = await openCurrentDatabase(ctx.config);
  try {
    const moves = await importFileJournals(dataDir, database, (move) => {
      if (!ctx.json && move.outcome === "moved")
        process.stderr.write(
          `moved campaign ${move.campaign} (${move.orders} ${plural(move.orders, "order")})\n`,
        );
    });
    const moved = moves.filter((m) => m.outcome === "moved");
    if (ctx.json) printJson({ data_dir: dataDir, campaigns: moves });
    else {
      process.stdout.write(
        `${moved.length} campaign journals moved from ${dataDir}, ${moves.length - moved.length} already in the database\n`,
      );
    }
    return 0;
  } finally {
    await database.close();
  }
}
