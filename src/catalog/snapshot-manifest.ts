import type { NormalizedFilters } from "./catalog-filters.js";

/** A product kept in the snapshot although something giftjobs relies on is wrong with it. */
export interface ProductWarning {
  code: string;
  problems: string[];
}

/** `manifest.json`: what a snapshot holds and how it was made. */
export interface SnapshotManifest {
  /** Directory name under `snapshots/`. */
  snapshot: string;
  /** When the sync started (ISO 8601). */
  fetched_at: string;
  /** X-Api-Version the service answered with, else the configured one, else null. */
  api_version: string | null;
  filters: NormalizedFilters;
  product_count: number;
  /** Codes in index.json (a subscription counts once per plan). */
  index_entries: number;
  counts: {
    by_payout_type: Record<string, number>;
    by_currency: Record<string, number>;
  };
  pages: number;
  duration_ms: number;
  /** sha256 (hex) of products.json exactly as written. */
  sha256: string;
  products_bytes: number;
  warnings: ProductWarning[];
  /** Set when a job resumed from a checkpoint: the pages fetched before the resume. */
  resumed_after_page?: number;
}
