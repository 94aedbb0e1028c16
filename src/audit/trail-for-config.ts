import type { Config } from "../config.js";
import type { Database } from "../db/open-database.js";
import { FileAuditTrail } from "./file-trail.js";
import type { AuditTrail } from "./trail.js";

/** What the trail's place depends on. */
export type AuditSettings = Pick<Config, "dataDir" | "databaseUrl" | "databaseSchema">;

/**
 * The configured trail: PostgreSQL when GIFTJOBS_DATABASE_URL is set (on `database` when the
 * caller has it open, else on a pool of its own, its schema checked), else the data dir's file.
 * pg is loaded only in the first case (docs/architecture/command-line.md, "Start-up").
 */
export async function openAuditTrail(
  settings: AuditSettings,
  database?: Database,
): Promise<AuditTrail> {
  if (!database && !settings.databaseUrl) return new FileAuditTrail(settings.dataDir);
  const { PgAuditTrail } = await import("./pg-trail.js");
  if (database) return new PgAuditTrail(database);
  const { openCurrentDatabase } = await import("../db/migrations.js");
  return new PgAuditTrail(await openCurrentDatabase(settings, { max: 1 }), true);
}
