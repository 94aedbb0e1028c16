import type { RawProduct } from "../api/schemas.js";
import type { Logger } from "../log.js";
import type { CatalogDiff } from "./catalog-diff.js";
import type { NormalizedFilters } from "./catalog-filters.js";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";
import type { ManifestMeta } from "./snapshot-tally.js";
import type { CheckpointOptions } from "./sync-checkpoint.js";

/** What a store is told of a sync when it starts. */
export interface SyncPlan {
  filters: NormalizedFilters;
  /** Products per page. */
  limit: number;
  /** When the sync started (Date.now()): the new snapshot's name and fetched_at. */
  started: number;
  /** Makes a file sync resumable after a crash (the catalog-sync job); PostgreSQL ignores it. */
  checkpoint?: CheckpointOptions;
  log: Logger;
}

/** A snapshot's manifest and diff, once its writer has finished. */
export interface FinishedSnapshot {
  manifest: SnapshotManifest;
  diff: CatalogDiff;
}

/** Writes one snapshot's products as pages arrive (SnapshotWriter, DatabaseSnapshotWriter). */
interface SnapshotSink {
  readonly productCount: number;
  add(page: readonly RawProduct[], text?: Uint8Array): Promise<void>;
  finish(meta: ManifestMeta): Promise<FinishedSnapshot>;
}

/** Where an interrupted sync carries on: after the pages its checkpoint vouches for. */
export interface SyncResume {
  after: string;
  pages: number;
  apiVersion: string | null;
  /** Time the sync spent before it was interrupted. */
  elapsedMs: number;
}

/** The new snapshot, begun: its name, the current one it is compared with, its writer. */
export interface SyncStart {
  name: string;
  current: CatalogSnapshot | undefined;
  writer: SnapshotSink;
}

/** How far the sync got: after each page, for the file store's checkpoint. */
export interface SyncProgressMark {
  after: string;
  pages: number;
  apiVersion: string | null;
  elapsedMs: number;
}

/**
 * One sync's side of the store (docs/architecture/catalog.md, "Two stores, one sync"). The sync
 * calls begin(), then pageWritten() after each page, then publish() and prune(); on any failure
 * fail(), which undoes what was written; end() always, last. Nothing the sync wrote is seen by a
 * reader before publish() returns.
 */
export interface SyncSession {
  /** Set when the sync carries on from a checkpoint. */
  readonly resume?: SyncResume;
  begin(): Promise<SyncStart>;
  pageWritten(mark: SyncProgressMark): Promise<void>;
  /** Makes the finished snapshot current; returns where it is (a directory, or its label). */
  publish(finished: FinishedSnapshot): Promise<string>;
  /** Retention: removes all but the newest `keep` snapshots, never the current; their names. */
  prune(keep: number): Promise<string[]>;
  /** Undoes what the sync wrote; returns the store's own account of `error`, if it has one. */
  fail(error: unknown): Promise<Error | undefined>;
  /** Lets go of the store's sync lock (and its connection). */
  end(): Promise<void>;
}
