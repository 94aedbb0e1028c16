import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { type CatalogSource, storeOf } from "./catalog-store.js";
import { readCurrentPointer } from "./current-pointer.js";
import { DamagedFileError, parseFileJson } from "./damaged-file-error.js";
import type { CatalogDiff } from "./diff-file.js";
import type { CatalogIndex } from "./index-entry.js";
import { NoSnapshotError } from "./no-snapshot-error.js";
import { openDatabaseSnapshot } from "../db/catalog-snapshot.js";
import { readProductsFile } from "./products-file-reader.js";
import { catalogDir, SNAPSHOT_FILES } from "./snapshot-layout.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";

export type { CatalogSnapshot } from "./catalog-snapshot.js";

/** A JSON file of the snapshot; missing or not JSON, it is a DamagedFileError naming it. */
async function readJson<T>(path: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new DamagedFileError(path, undefined, "missing");
  }
  return parseFileJson<T>(text, path);
}

/**
 * The current snapshot of `source` (a data directory, or a store: PostgreSQL when it has a
 * database), or undefined when no sync has published one.
 */
export async function openCurrentSnapshot(
  source: CatalogSource,
): Promise<CatalogSnapshot | undefined> {
  const store = storeOf(source);
  if (store.database) return openDatabaseSnapshot(store.database);
  return openFileSnapshot(store.dataDir);
}

/** The snapshot `current.json` points at, or undefined when no sync has published one. */
async function openFileSnapshot(dataDir: string): Promise<CatalogSnapshot | undefined> {
  const pointer = await readCurrentPointer(dataDir);
  if (!pointer) return undefined;
  const { name, dir } = pointer;
  const manifest = await readJson<SnapshotManifest>(join(dir, SNAPSHOT_FILES.manifest));
  return {
    name,
    dir,
    manifest,
    index: () => readJson<CatalogIndex>(join(dir, SNAPSHOT_FILES.index)),
    products: () => readProductsFile(join(dir, SNAPSHOT_FILES.products)),
    verifyProducts: async () => {
      const path = join(dir, SNAPSHOT_FILES.products);
      if ((await sha256OfFile(path)) !== manifest.sha256) {
        throw new DamagedFileError(
          path,
          undefined,
          "changed since it was published (sha256 differs from manifest.json)",
        );
      }
    },
    diff: async () => {
      try {
        return await readJson<CatalogDiff>(join(dir, SNAPSHOT_FILES.diff));
      } catch (error) {
        if (error instanceof DamagedFileError && error.problem === "missing") return undefined;
        throw error;
      }
    },
  };
}

/** sha256 (hex) of a file's bytes, read in 1 MiB chunks. */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk);
  return hash.digest("hex");
}

/** Like openCurrentSnapshot, but a missing snapshot is a NoSnapshotError (exit 2). */
export async function requireCurrentSnapshot(source: CatalogSource): Promise<CatalogSnapshot> {
  const snapshot = await openCurrentSnapshot(source);
  if (!snapshot) throw new NoSnapshotError(storeWhere(source), Boolean(storeOf(source).database));
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

/** Where a missing snapshot was looked for: the catalog folder, or the database's schema. */
function storeWhere(source: CatalogSource): string {
  const store = storeOf(source);
  return store.database
    ? `PostgreSQL schema ${store.database.schema} (GIFTJOBS_DATABASE_URL)`
    : catalogDir(store.dataDir);
}
