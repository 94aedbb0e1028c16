import type { CatalogStore } from "../catalog/catalog-store.js";
import { openDatabaseSnapshot } from "./catalog-snapshot.js";
import type { Database } from "./open-database.js";

/**
 * The catalog kept in PostgreSQL (docs/catalog-database.md): snapshots are rows of
 * catalog_snapshots and partitions of catalog_products, catalog_current points at one.
 * `dataDir` stays the place of what is only ever local.
 */
export function databaseCatalogStore(dataDir: string, database: Database): CatalogStore {
  return {
    dataDir,
    where: `PostgreSQL schema ${database.schema} (GIFTJOBS_DATABASE_URL)`,
    inDatabase: true,
    openCurrent: () => openDatabaseSnapshot(database),
    // Loaded when a sync starts: the COPY and the writers are for syncs only.
    startSync: async (plan) =>
      (await import("./catalog-sync.js")).startDatabaseSync(database, plan),
  };
}
