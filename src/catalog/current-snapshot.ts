import type { CatalogSnapshot } from "./catalog-snapshot.js";
import type { CatalogSource } from "./catalog-store.js";
import { storeOf } from "./file-store.js";
import type { CatalogIndex } from "./index-entry.js";
import { NoSnapshotError } from "./no-snapshot-error.js";

export type { CatalogSnapshot } from "./catalog-snapshot.js";

/**
 * The current snapshot of `source` (a data directory, or a store: PostgreSQL's, say), or
 * undefined when no sync has published one.
 */
export async function openCurrentSnapshot(
  source: CatalogSource,
): Promise<CatalogSnapshot | undefined> {
  return storeOf(source).openCurrent();
}

/** Like openCurrentSnapshot, but a missing snapshot is a NoSnapshotError (exit 2). */
export async function requireCurrentSnapshot(source: CatalogSource): Promise<CatalogSnapshot> {
  const store = storeOf(source);
  const snapshot = await store.openCurrent();
  if (!snapshot) throw new NoSnapshotError(store.where, store.inDatabase);
  return snapshot;
}

/**
 * The current snapshot's index, or undefined when there is none (order preflight). With
 * `overrides`, the product states the service pushed since it was synced (`product.update`, kept
 * in Redis: see product-overrides.ts) are laid over it; an import lays them over the index it is
 * given itself.
 */
export async function loadCurrentIndex(
  source: CatalogSource,
  overrides?: { applyTo(index: CatalogIndex): CatalogIndex | Promise<CatalogIndex> },
): Promise<CatalogIndex | undefined> {
  const snapshot = await openCurrentSnapshot(source);
  if (!snapshot) return undefined;
  const index = await snapshot.index();
  return overrides ? overrides.applyTo(index) : index;
}
