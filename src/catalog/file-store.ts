import type { CatalogSource, CatalogStore } from "./catalog-store.js";
import { openFileSnapshot } from "./file-snapshot.js";
import { catalogDir } from "./snapshot-layout.js";

/**
 * The catalog kept in files under `dataDir`, a directory per snapshot and `current.json`
 * pointing at one (docs/architecture/catalog.md, "The life of a catalog page").
 */
export function fileCatalogStore(dataDir: string): CatalogStore {
  return {
    dataDir,
    where: catalogDir(dataDir),
    inDatabase: false,
    openCurrent: () => openFileSnapshot(dataDir),
    // Loaded when a sync starts: readers of the catalog do not need the writers.
    startSync: async (plan) => (await import("./file-sync.js")).startFileSync(dataDir, plan),
  };
}

/** The store `source` names: a data directory is the file store under it. */
export function storeOf(source: CatalogSource): CatalogStore {
  return typeof source === "string" ? fileCatalogStore(source) : source;
}
