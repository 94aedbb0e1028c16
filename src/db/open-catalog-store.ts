import type { CatalogStore } from "../catalog/catalog-store.js";
import { fileCatalogStore } from "../catalog/file-store.js";
import type { Database, DatabaseSettings } from "./open-database.js";

/** An open store; close() ends the database's pool (nothing for files). */
export interface OpenCatalogStore extends CatalogStore {
  /** PostgreSQL, when the catalog is kept there: the overrides are read from it too. */
  database?: Database;
  close(): Promise<void>;
}

/**
 * The store the configuration names: PostgreSQL when `databaseUrl` is set (it must answer and
 * its schema be current: requireCurrentSchema), else the files of `dataDir`.
 */
export async function openCatalogStore(
  settings: { dataDir: string } & Partial<DatabaseSettings>,
): Promise<OpenCatalogStore> {
  if (!settings.databaseUrl) {
    return { ...fileCatalogStore(settings.dataDir), close: async () => {} };
  }
  // Loaded here: pg only with a database configured (docs/architecture/command-line.md, "Start-up").
  const { openCurrentDatabase } = await import("./migrations.js");
  const { databaseCatalogStore } = await import("./catalog-store.js");
  const database = await openCurrentDatabase({
    databaseUrl: settings.databaseUrl,
    databaseSchema: settings.databaseSchema ?? "giftjobs",
  });
  return {
    ...databaseCatalogStore(settings.dataDir, database),
    database,
    close: () => database.close(),
  };
}

/** Runs `fn` with the configured store open; closes it after. */
export async function withCatalogStore<T>(
  settings: { dataDir: string } & Partial<DatabaseSettings>,
  fn: (store: CatalogStore) => Promise<T>,
): Promise<T> {
  const store = await openCatalogStore(settings);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
