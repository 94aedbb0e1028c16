import type { ApiClient } from "../api/client.js";
import { MalformedResponseError } from "../api/errors/malformed-response-error.js";
import { type ProductQuery, productSearchParams } from "../api/product-query.js";
import type { RawProduct } from "../api/schemas.js";
import { catalogSlices } from "./catalog-slices.js";
import { type RetryOptions, withRetries } from "./retry-policy.js";

/** One page of GET /v2/product as the sync uses it. */
export interface FetchedPage {
  /** 1-based, counted from the start of the catalog (not of this run, when resuming). */
  number: number;
  /** The cursor this page was asked for; undefined for the first page. */
  requestedAfter: string | undefined;
  products: RawProduct[];
  /**
   * Each product's JSON text as the service sent it (catalogSlices), to be stored as is; absent,
   * or undefined for a product, where it cannot be, and the product is serialised instead.
   */
  raw?: (Buffer | undefined)[];
  /** The cursor of the next page. */
  after: string;
  /** X-Api-Version the service answered with. */
  apiVersion: string | null;
}

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
 * page's cursor is known, so the service prepares it while this page is cut into products and
 * the caller writes it; the order stays strictly sequential (one cursor at a time). Each
 * request is retried on its own. Throws MalformedResponseError on a page that is not a catalog
 * page or a cursor that does not advance.
 */
export async function* fetchPages(options: FetchPagesOptions): AsyncGenerator<FetchedPage> {
  let number = (options.pagesBefore ?? 0) + 1;
  let after = options.after;
  // Cursors are opaque: "advancing" can only mean "never seen before in this run".
  const seen = new Set<string>(after === undefined ? [] : [after]);
  let pending = fetchPage(options, after, number);
  for (;;) {
    const { page, bytes } = await pending;
    if (page.products.length === 0) return;
    if (seen.has(page.after)) {
      throw malformed(
        "cursor_not_advancing",
        `page ${number}: the after cursor did not advance (${JSON.stringify(page.after)} was already used); stopping to avoid a loop`,
      );
    }
    seen.add(page.after);
    after = page.after;
    number += 1;
    pending = fetchPage(options, after, number);
    // If the caller stops early the prefetch must not become an unhandled rejection.
    pending.catch(() => undefined);
    await requestWritten();
    attachSlices(page, bytes);
    yield page;
  }
}

/**
 * Lets the request just made reach the socket. node:http writes it from a process.nextTick,
 * and those run only once the microtask queue is empty: without this turn of the event loop
 * the request would wait for all the synchronous work on this page (cutting, indexing,
 * diffing), and the service would prepare the next page only after it.
 */
function requestWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Each product's text as received, where catalogSlices can vouch for it. */
function attachSlices(page: FetchedPage, bytes: Buffer): void {
  if (page.products.length === 0) return;
  const raw = catalogSlices(bytes);
  // The slices come from the same bytes as the parsed products; a count that differs would
  // mean the scan is wrong, and then nothing of it is used.
  if (raw && raw.length === page.products.length && raw.every(isObjectText)) page.raw = raw;
}

async function fetchPage(
  options: FetchPagesOptions,
  after: string | undefined,
  number: number,
): Promise<{ page: FetchedPage; bytes: Buffer }> {
  const params = productSearchParams({ ...options.query, after });
  const response = await withRetries(
    () =>
      options.client.requestRaw({
        method: "GET",
        path: "/v2/product",
        query: params,
        signal: options.signal,
      }),
    options.retry,
    options.signal,
    (error, attempt) => options.onRetry?.(error, number, attempt),
  );
  const page = checkPage(response.body, number, after, response.apiVersion);
  return { page, bytes: response.bytes };
}

/** An object's text: each product is one (checkPage made sure it has a code). */
function isObjectText(text: Buffer | undefined): boolean {
  return text === undefined || (text[0] === 0x7b && text[text.length - 1] === 0x7d);
}

/**
 * Checks the envelope by hand rather than with the zod page schema: that schema copies every
 * product, and a sync of 100k products should only pay for looking at them once.
 */
function checkPage(
  body: unknown,
  number: number,
  requestedAfter: string | undefined,
  apiVersion: string | null,
): FetchedPage {
  const where = `page ${number} (after ${requestedAfter === undefined ? "the start" : JSON.stringify(requestedAfter)})`;
  const page = body as { catalog?: unknown; pagination?: { cursors?: { after?: unknown } } };
  if (page === null || typeof page !== "object" || !Array.isArray(page.catalog)) {
    throw malformed("malformed_page", `${where}: the response has no catalog array`);
  }
  for (const [i, product] of page.catalog.entries()) {
    const code = (product as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || code === "") {
      throw malformed("malformed_page", `${where}: catalog[${i}] has no product code`);
    }
  }
  const next = page.pagination?.cursors?.after;
  if (page.catalog.length > 0 && (typeof next !== "string" || next === "")) {
    throw malformed("malformed_page", `${where}: products but no pagination.cursors.after`);
  }
  return {
    number,
    requestedAfter,
    products: page.catalog as RawProduct[],
    after: typeof next === "string" ? next : "",
    apiVersion,
  };
}

function malformed(type: string, message: string): MalformedResponseError {
  return new MalformedResponseError({ status: 200, type, message });
}
