import type { RawProduct } from "../api/schemas.js";
import { type CatalogDiff, DiffBuilder } from "./catalog-diff.js";
import { serialiseProduct } from "./compact-record.js";
import type { IndexedEntry } from "./index-entry.js";
import type { PreviousRecords } from "./previous-records.js";
import { catalogProductProblems } from "./product-check.js";
import { recordDigest } from "./record-digest.js";
import type { ProductWarning, SnapshotManifest } from "./snapshot-manifest.js";

/** What the sync knows at the end, beside what the writer counted. */
export type ManifestMeta = Pick<
  SnapshotManifest,
  "snapshot" | "api_version" | "filters" | "pages" | "duration_ms" | "resumed_after_page"
>;

/** One product as the tally saw it: what a store writes of it. */
export interface TalliedProduct {
  /** Its entries of the index (a product with plans has several). */
  indexed: IndexedEntry[];
  /** Its compact record, and whether the record needs a line of its own (records.ndjson). */
  record: string;
  ownLine: boolean;
  /** Its record's digest (digests.txt), or null when the code came earlier in the same sync. */
  digest: string | null;
  /** The code came earlier in the same sync: the last product of a code is the one indexed. */
  repeated: boolean;
}

/** What a writer counted of the bytes it stored: the checksum and size of products.json. */
export interface StoredBytes {
  productCount: number;
  sha256: string;
  bytes: number;
}

/**
 * The checks, counts, warnings and diff of one snapshot, product by product: the same for every
 * store, so the same catalog gives the same manifest and diff in files and in PostgreSQL
 * (docs/architecture/catalog.md, "Two stores, one sync").
 */
export class SnapshotTally {
  private readonly byPayoutType: Record<string, number> = {};
  private readonly byCurrency: Record<string, number> = {};
  private readonly warnings: ProductWarning[] = [];
  private readonly diff: DiffBuilder;
  private indexEntries = 0;

  constructor(previous: PreviousRecords | undefined) {
    this.diff = new DiffBuilder(previous);
  }

  /** Checks one product, counts it and compares it with the previous snapshot. */
  add(product: RawProduct): TalliedProduct {
    const problems = catalogProductProblems(product);
    const before = this.diff.see(product.code);
    const repeated = before === undefined;
    if (repeated) problems.push(`code: appears more than once; the last one is indexed`);
    const { indexed, record, ownLine } = serialiseProduct(product, problems);
    let digest: string | null = null;
    if (before !== undefined) {
      digest = recordDigest(record);
      this.diff.compare(product.code, product.name ?? null, before, digest, record);
    }
    if (problems.length > 0) this.warnings.push({ code: product.code, problems });
    count(this.byPayoutType, product.payout_type);
    count(this.byCurrency, product.currency);
    this.indexEntries += indexed.length;
    return { indexed, record, ownLine, digest, repeated };
  }

  /** The manifest of the finished snapshot, from the sync's `meta` and the writer's `stored`. */
  manifest(meta: ManifestMeta, fetchedAt: string, stored: StoredBytes): SnapshotManifest {
    return {
      snapshot: meta.snapshot,
      fetched_at: fetchedAt,
      api_version: meta.api_version,
      filters: meta.filters,
      product_count: stored.productCount,
      index_entries: this.indexEntries,
      counts: { by_payout_type: this.byPayoutType, by_currency: this.byCurrency },
      pages: meta.pages,
      duration_ms: meta.duration_ms,
      sha256: stored.sha256,
      products_bytes: stored.bytes,
      warnings: this.warnings,
      ...(meta.resumed_after_page === undefined
        ? {}
        : { resumed_after_page: meta.resumed_after_page }),
    };
  }

  /** The diff against the previous snapshot, named for the new one. */
  finishDiff(snapshot: string): Promise<CatalogDiff> {
    return this.diff.finish(snapshot);
  }
}

function count(counts: Record<string, number>, value: unknown): void {
  const key = typeof value === "string" && value !== "" ? value : "(none)";
  counts[key] = (counts[key] ?? 0) + 1;
}
