// The catalog sync's defaults, in one place: the sync, the catalog-sync job and the command line's
// options take them from here. Free of imports, since the command line's definitions load it at
// start-up (docs/architecture/command-line.md, "Start-up").

/** Snapshots kept after a publish; older ones are removed, never the current one. */
export const DEFAULT_KEEP = 14;

/** Products asked for per page of GET /v2/product (the service allows 1..500). */
export const DEFAULT_PAGE_SIZE = 500;

/** The largest fraction of products that may disappear before the shrink guard refuses. */
export const DEFAULT_MAX_SHRINK = 0.2;
