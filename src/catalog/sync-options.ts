import type { ApiClient } from "../api/client.js";
import type { Logger } from "../log.js";
import type { CatalogDiff } from "./catalog-diff.js";
import type { CatalogFilters } from "./catalog-filters.js";
import type { CatalogStore } from "./catalog-store.js";
import type { RetryOptions } from "./retry-policy.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";
import type { CheckpointOptions } from "./sync-checkpoint.js";

/** Progress after each page. */
export interface SyncProgress {
  pages: number;
  products: number;
}

export interface SyncCatalogOptions {
  client: ApiClient;
  /** `$GIFTJOBS_DATA_DIR`; the file store lives in its `catalog/` folder. */
  dataDir: string;
  /**
   * Where the snapshot is published. PostgreSQL's store (src/db/catalog-store.ts, when
   * GIFTJOBS_DATABASE_URL is set) writes it in one transaction and does not use `checkpoint`
   * (docs/catalog-database.md, "Syncing"). @defaultValue the files of `dataDir`
   */
  store?: CatalogStore;
  /** @defaultValue the whole catalog */
  filters?: CatalogFilters;
  /** Products per page (1..500). @defaultValue DEFAULT_PAGE_SIZE (sync-defaults.ts) */
  pageSize?: number;
  /** Publish even when the catalog shrank by more than `maxShrink`. @defaultValue false */
  allowShrink?: boolean;
  /**
   * Largest fraction of products that may disappear without allowShrink.
   * @defaultValue DEFAULT_MAX_SHRINK (sync-defaults.ts)
   */
  maxShrink?: number;
  /** Snapshots kept after a publish. @defaultValue DEFAULT_KEEP (sync-defaults.ts) */
  keep?: number;
  retry?: RetryOptions;
  /** Recorded in the manifest when the service does not echo X-Api-Version. */
  apiVersion?: string;
  /** Makes the sync resumable after a crash (the catalog-sync job). */
  checkpoint?: CheckpointOptions;
  onProgress?: (progress: SyncProgress) => void;
  log?: Logger;
  signal?: AbortSignal;
}

export interface SyncCatalogResult {
  /** The published snapshot's name and directory. */
  snapshot: string;
  dir: string;
  manifest: SnapshotManifest;
  diff: Pick<CatalogDiff, "from" | "summary">;
  /** Pages fetched before this run resumed from a checkpoint. */
  resumedAfterPage?: number;
}
