import { silentLogger } from "../log.js";
import { filtersToQuery, normalizeFilters } from "./catalog-filters.js";
import { storeOf } from "./file-store.js";
import { fetchPages } from "./page-fetcher.js";
import { DEFAULT_KEEP, DEFAULT_PAGE_SIZE } from "./sync-defaults.js";
import { describe, guardShrink, syncFailure } from "./sync-failure.js";
import type { SyncCatalogOptions, SyncCatalogResult } from "./sync-options.js";

export type { SyncCatalogOptions, SyncCatalogResult, SyncProgress } from "./sync-options.js";

/**
 * Pages through GET /v2/product and publishes a new snapshot (products, manifest, index, diff)
 * in the store (`options.store`, else the files of `options.dataDir`), then makes it current and
 * prunes old ones. The paging, the checks, the shrink guard, the diff and retention are the same
 * for every store; the store writes and publishes (docs/architecture/catalog.md, "Two stores,
 * one sync"). Any failure (an HTTP error that outlives its retries, a malformed page, a cursor
 * that does not advance, the shrink guard) throws a RunError and leaves the current snapshot as
 * it was.
 */
export async function syncCatalog(options: SyncCatalogOptions): Promise<SyncCatalogResult> {
  const log = options.log ?? silentLogger;
  const started = Date.now();
  const filters = normalizeFilters(options.filters);
  const limit = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const store = options.store ?? storeOf(options.dataDir);
  const session = await store.startSync({
    filters,
    limit,
    started,
    checkpoint: options.checkpoint,
    log,
  });
  const resume = session.resume;
  const elapsed = () => (resume?.elapsedMs ?? 0) + Date.now() - started;
  let pages = resume?.pages ?? 0;
  try {
    const { name, current, writer } = await session.begin();
    if (resume) log.info({ pages, products: writer.productCount }, "resuming catalog sync");
    let apiVersion = resume?.apiVersion ?? null;
    for await (const page of fetchPages({
      client: options.client,
      query: filtersToQuery(filters, limit),
      after: resume?.after,
      pagesBefore: pages,
      retry: options.retry,
      signal: options.signal,
      onRetry: (error, page, attempt) =>
        log.warn({ page, attempt, error: describe(error) }, "retrying catalog page"),
    })) {
      await writer.add(page.products, page.text);
      pages = page.number;
      apiVersion = page.apiVersion ?? apiVersion;
      await session.pageWritten({ after: page.after, pages, apiVersion, elapsedMs: elapsed() });
      options.onProgress?.({ pages, products: writer.productCount });
    }
    guardShrink(current, writer.productCount, filters, options);
    const finished = await writer.finish({
      snapshot: name,
      api_version: apiVersion ?? options.apiVersion ?? null,
      filters,
      pages,
      duration_ms: elapsed(),
      resumed_after_page: resume?.pages,
    });
    const dir = await session.publish(finished);
    const pruned = await session.prune(options.keep ?? DEFAULT_KEEP);
    if (pruned.length > 0) log.info({ pruned }, "removed old snapshots");
    const { manifest, diff } = finished;
    return {
      snapshot: name,
      dir,
      manifest,
      diff: { from: diff.from, summary: diff.summary },
      ...(resume ? { resumedAfterPage: resume.pages } : {}),
    };
  } catch (error) {
    throw (await session.fail(error)) ?? syncFailure(error, pages);
  } finally {
    await session.end();
  }
}
