import { ApiError } from "../api/errors/api-error.js";
import { filterChange, type NormalizedFilters } from "./catalog-filters.js";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { ShrinkRefusedError } from "./shrink-refused-error.js";

/** The shrink guard: a catalog that lost more than `maxShrink` of its products is not published. */
export function guardShrink(
  current: CatalogSnapshot | undefined,
  count: number,
  filters: NormalizedFilters,
  options: { allowShrink?: boolean; maxShrink?: number },
): void {
  if (!current || options.allowShrink) return;
  const maxShrink = options.maxShrink ?? 0.2;
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
