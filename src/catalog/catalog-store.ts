import type { Database, DatabaseSettings } from "../db/open-database.js";

/**
 * Where the catalog is kept: files under `dataDir` (the default), or PostgreSQL when
 * GIFTJOBS_DATABASE_URL is set (docs/catalog-database.md). `dataDir` stays the place of what is
 * only ever local (the file sync's lock and temporary directories).
 */
export interface CatalogStore {
  dataDir: string;
  database?: Database;
}

/** What the readers take: a data directory (files) or a store. */
export type CatalogSource = string | CatalogStore;

export function storeOf(source: CatalogSource): CatalogStore {
  return typeof source === "string" ? { dataDir: source } : source;
}

/** An open store; close() ends the database's pool (nothing for files). */
export interface OpenCatalogStore extends CatalogStore {
  close(): Promise<void>;
}

/**
 * The store the configuration names: PostgreSQL when `databaseUrl` is set (it must answer and
 * its schema be current: requireCurrentSchema), else the files of `dataDir`.
 */
export async function openCatalogStore(
  settings: { dataDir: string } & Partial<DatabaseSettings>,
): Promise<OpenCatalogStore> {
  if (!settings.databaseUrl) return { dataDir: settings.dataDir, close: async () => {} };
  // Loaded here: pg only with a database configured (docs/architecture/command-line.md, "Start-up").
  const { openCurrentDatabase } = await import("../db/migrations.js");
  const database = await openCurrentDatabase({
    databaseUrl: settings.databaseUrl,
    databaseSchema: settings.databaseSchema ?? "giftjobs",
  });
  return { dataDir: settings.dataDir, database, close: () => database.close() };
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

/** How a store is named in messages: the data directory, or the schema and database. */
export function storeLabel(store: CatalogStore): string {
  if (!store.database) return store.dataDir;
  return `PostgreSQL schema ${store.database.schema}`;
}
