import { databaseAddress } from "../db/database-error.js";
import { schemaStatus } from "../db/migrations.js";
import { type Database, type DatabaseSettings, openDatabase } from "../db/open-database.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

/**
 * PostgreSQL, when GIFTJOBS_DATABASE_URL is set: it answers and its schema is migrated to the
 * version this giftjobs knows (docs/catalog-database.md, "Migrations"). Undefined without the
 * setting: the files under the data dir need no check of their own.
 */
export async function databaseCheck(
  settings: DatabaseSettings,
  timeoutMs = 5000,
): Promise<DoctorCheck | undefined> {
  if (!settings.databaseUrl) return undefined;
  const where = `PostgreSQL at ${databaseAddress(settings.databaseUrl)}`;
  let database: Database;
  try {
    database = await openDatabase(settings, { max: 1, connectTimeoutMs: timeoutMs });
  } catch (error) {
    return failed("database", (error as Error).message);
  }
  try {
    const { version, known } = await schemaStatus(database);
    const schema = `schema ${settings.databaseSchema}`;
    if (version < known)
      return failed(
        "database",
        `${where} answers but its ${schema} is at version ${version}, this giftjobs needs ${known}: run giftjobs db migrate`,
      );
    if (version > known)
      return failed(
        "database",
        `${where} answers but its ${schema} is at version ${version}, newer than this giftjobs knows (${known}): upgrade giftjobs`,
      );
    return passed("database", `${where} answers; ${schema} is migrated (version ${version})`);
  } catch (error) {
    return failed("database", (error as Error).message);
  } finally {
    await database.close().catch(() => {});
  }
}
