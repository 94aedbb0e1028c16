import { PgAuditTrail } from "../audit/pg-trail.js";
import { databaseCatalogStore } from "../db/catalog-store.js";
import { openCurrentDatabase } from "../db/migrations.js";
import type { Database } from "../db/open-database.js";
import { PgJournal } from "../db/order-journal.js";
import { PgPaidMemory } from "../db/paid-memory.js";
import { PgProductOverrides } from "../db/product-overrides.js";
import { usersFile } from "./file-stores.js";
import type { OpenStoresOptions, StoreSettings, Stores } from "./types.js";

/** The stores in PostgreSQL, its schema checked first (requireCurrentSchema). */
export async function openPgStores(
  settings: StoreSettings,
  options: OpenStoresOptions,
): Promise<Stores> {
  const database = await openCurrentDatabase(settings, options);
  return pgStores(settings.dataDir, database);
}

/**
 * The stores on an open `database` (docs/catalog-database.md); close() ends its pool. The
 * dashboard's users stay in their file.
 */
export function pgStores(dataDir: string, database: Database): Stores {
  const overrides = new PgProductOverrides(database);
  return {
    kind: "postgresql",
    dataDir,
    catalog: databaseCatalogStore(dataDir, database),
    journal: new PgJournal(database),
    paidMemory: new PgPaidMemory(database),
    audit: new PgAuditTrail(database),
    productOverrides: () => overrides,
    users: usersFile,
    close: () => database.close(),
  };
}
