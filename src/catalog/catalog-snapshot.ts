import type { RawProduct } from "../api/schemas.js";
import type { CatalogDiff } from "./diff-file.js";
import type { CatalogIndex } from "./index-entry.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";

/**
 * A published snapshot, in files or in PostgreSQL (docs/catalog-database.md, "Tables"). Its
 * directory (or its rows) is never modified after publication, so the files can be
 * read at leisure even while a newer sync publishes (retention keeps the newest ones).
 */
export interface CatalogSnapshot {
  name: string;
  dir: string;
  manifest: SnapshotManifest;
  /** Reads index.json: the compact per-code index order preflight uses. */
  index(): Promise<CatalogIndex>;
  /** Every product as received, one at a time (products.json is never read whole). */
  products(): AsyncGenerator<RawProduct>;
  /**
   * Checks products.json against the sha256 in its manifest: a DamagedFileError when it changed
   * since publication. Run before printing products, so no output stops half-way.
   */
  verifyProducts(): Promise<void>;
  /** The diff with the snapshot before it; undefined when the file is missing. */
  diff(): Promise<CatalogDiff | undefined>;
}
