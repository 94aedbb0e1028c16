// The catalog library: sync, snapshot store, index and diff. The CLI and the job use only these.

export type { CatalogDiff, DiffChange } from "./catalog-diff.js";
export type { CatalogFilters, NormalizedFilters } from "./catalog-filters.js";
export type { CompactRecord, DiffField } from "./compact-record.js";
export { DIFF_FIELDS } from "./compact-record.js";
export {
  type CatalogSnapshot,
  loadCurrentIndex,
  openCurrentSnapshot,
  requireCurrentSnapshot,
} from "./current-snapshot.js";
export { indexEntriesOf } from "./index-entries.js";
export type { CatalogIndex, CatalogIndexEntry } from "./index-entry.js";
export { cleanLeftovers } from "./leftover-cleanup.js";
export { NoSnapshotError } from "./no-snapshot-error.js";
export type { RetryOptions } from "./retry-policy.js";
export { ShrinkRefusedError } from "./shrink-refused-error.js";
export { catalogDir, SNAPSHOT_FILES, snapshotsDir } from "./snapshot-layout.js";
export type { ProductWarning, SnapshotManifest } from "./snapshot-manifest.js";
export {
  type SyncCatalogOptions,
  type SyncCatalogResult,
  type SyncProgress,
  syncCatalog,
} from "./sync-catalog.js";
export type { CheckpointOptions, SyncCheckpoint } from "./sync-checkpoint.js";
