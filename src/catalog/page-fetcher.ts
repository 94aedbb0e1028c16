import type { ApiClient } from "../api/client.js";
import { type ProductQuery, productSearchParams } from "../api/product-query.js";
import { type FetchedPage, malformed, type ReceivedPage, receivePage } from "./catalog-page.js";
import { type RetryOptions, withRetries } from "./retry-policy.js";

export type { FetchedPage } from "./catalog-page.js";

export interface FetchPagesOptions {
  client: ApiClient;
  /** Filters and limit; the cursor is managed here. */
  query: Omit<ProductQuery, "after" | "before">;
  /** Resume after this cursor, with `pagesBefore` pages already fetched. */
  after?: string;
  pagesBefore?: number;
  retry?: RetryOptions;
  signal?: AbortSignal;
  onRetry?: (error: Error, page: number, attempt: number) => void;
}

/**
 * Every page forward, stopping on an empty one. The next page is requested as soon as this
 * page's cursor is known, before its products are parsed (see receivePage), so the service
 * prepares it while this page is parsed and the caller writes it; the order stays strictly
 * sequential (one cursor at a time). Each request is retried on its own. Throws
 * MalformedResponseError on a page that is not a catalog page or a cursor that does not
 * advance.
 */
export async function* fetchPages(options: FetchPagesOptions): AsyncGenerator<FetchedPage> {
  let number = (options.pagesBefore ?? 0) + 1;
  let after = options.after;
  // Cursors are opaque: "advancing" can only mean "never seen before in this run".
  const seen = new Set<string>(after === undefined ? [] : [after]);
  let pending = fetchPage(options, after, number);
  for (;;) {
    const received = await pending;
    if (received.empty) return;
    if (seen.has(received.after)) {
      throw malformed(
        "cursor_not_advancing",
        `page ${number}: the after cursor did not advance (${JSON.stringify(received.after)} was already used); stopping to avoid a loop`,
      );
    }
    seen.add(received.after);
    after = received.after;
    number += 1;
    pending = fetchPage(options, after, number);
    // If the caller stops early the prefetch must not become an unhandled rejection.
    pending.catch(() => undefined);
    await requestWritten();
    yield received.complete();
  }
}

/**
 * Lets the request just made reach the socket. node:http writes it from a process.nextTick,
 * and those run only once the microtask queue is empty: without this turn of the event loop
 * the request would wait for all the synchronous work on this page (parsing, indexing,
 * diffing), and the service would prepare the next page only after it.
 */
function requestWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function fetchPage(
  options: FetchPagesOptions,
  after: string | undefined,
  number: number,
): Promise<ReceivedPage> {
  const params = productSearchParams({ ...options.query, after });
  const response = await withRetries(
    () =>
      options.client.requestBytes({
        method: "GET",
        path: "/v2/product",
        query: params,
        signal: options.signal,
      }),
    options.retry,
    options.signal,
    (error, attempt) => options.onRetry?.(error, number, attempt),
  );
  return receivePage(response.bytes, {
    number,
    requestedAfter: after,
    apiVersion: response.apiVersion,
  });
}
