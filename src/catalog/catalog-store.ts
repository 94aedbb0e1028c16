import type { CatalogSnapshot } from "./catalog-snapshot.js";
import type { SyncPlan, SyncSession } from "./sync-session.js";

/**
 * Where the catalog's snapshots are kept (docs/architecture/catalog.md, "Two stores, one sync"):
 * files under a data directory (file-store.ts, the default), or PostgreSQL when
 * GIFTJOBS_DATABASE_URL is set (src/db/catalog-store.ts, docs/catalog-database.md). Readers and
 * the sync know a store by this interface only, so the catalog never loads PostgreSQL's code.
 */
export interface CatalogStore {
  /** `$GIFTJOBS_DATA_DIR`: also the place of what is only ever local (the file sync's lock). */
  readonly dataDir: string;
  /** Where a missing snapshot was looked for, in words: the catalog folder, or the schema. */
  readonly where: string;
  /** Whether the store is a database: an empty one can also be filled by `catalog import-files`. */
  readonly inDatabase: boolean;
  /** The snapshot that is current, or undefined when no sync has published one. */
  openCurrent(): Promise<CatalogSnapshot | undefined>;
  /** Starts one sync into the store: it holds the store's sync lock until SyncSession.end(). */
  startSync(plan: SyncPlan): Promise<SyncSession>;
}

/** What the readers take: a data directory (files) or a store. */
export type CatalogSource = string | CatalogStore;
