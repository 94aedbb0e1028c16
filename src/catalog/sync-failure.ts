import { ApiError } from "../api/errors/api-error.js";
import { ServiceUnreachableError } from "../api/errors/service-unreachable-error.js";
import { RunError } from "../errors/run-error.js";
import { filterChange, type NormalizedFilters } from "./catalog-filters.js";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { ShrinkRefusedError } from "./shrink-refused-error.js";
import { DEFAULT_MAX_SHRINK } from "./sync-defaults.js";

/** The shrink guard: a catalog that lost more than `maxShrink` of its products is not published. */
export function guardShrink(
  current: CatalogSnapshot | undefined,
  count: number,
  filters: NormalizedFilters,
  options: { allowShrink?: boolean; maxShrink?: number },
): void {
  if (!current || options.allowShrink) return;
  const maxShrink = options.maxShrink ?? DEFAULT_MAX_SHRINK;
  const before = current.manifest.product_count;
  if (count >= before * (1 - maxShrink)) return;
  // Narrower filters shrink the catalog too; the guard still holds, but says so.
  const change = filterChange(current.manifest.filters, filters);
  throw new ShrinkRefusedError(before, count, maxShrink, change || undefined);
}

/** A failure as the sync's one line tells it. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const status = error.status > 0 ? `, HTTP ${error.status}` : "";
    const named = `(${error.type}${status})`;
    // Some messages name their type and status already (a refused API key).
    return error.message.includes(named) ? error.message : `${error.message} ${named}`;
  }
  return (error as Error)?.message ?? String(error);
}

/**
 * The sync's one line for a failure its store did not explain (SyncSession.fail): what failed
 * and where, and that the current snapshot is unchanged (exit 1).
 */
export function syncFailure(error: unknown, pages: number): Error {
  if (error instanceof RunError) return error;
  if (error instanceof ServiceUnreachableError) {
    // Not about a page: the service is not there at all.
    return new RunError(`${error.message} The current snapshot is unchanged.`, { cause: error });
  }
  const reason = describe(error);
  // Page checks name their page already; HTTP errors do not.
  const where = reason.startsWith("page ") ? "" : ` at page ${pages + 1}`;
  return new RunError(`catalog sync failed${where}: ${reason}; the current snapshot is unchanged`, {
    cause: error,
  });
}
