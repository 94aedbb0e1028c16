import { ApiError } from "./api-error.js";
import { basicView } from "./basic-view.js";
import type { OrderBook, StoredOrder } from "./order-book.js";
import type { Reply } from "./product-routes.js";

/** The OpenAPI's bounds and default of `limit` on GET /v2/order. */
const MAX_LIMIT = 500;
const DEFAULT_LIMIT = 100;

interface OrderPageQuery {
  limit: number;
  after?: string;
  before?: string;
}

function parseQuery(params: URLSearchParams): OrderPageQuery {
  const after = params.get("after") || undefined;
  const before = params.get("before") || undefined;
  if (after !== undefined && before !== undefined)
    throw new ApiError("pagination_error", "after and before cannot be used together");
  const raw = params.get("limit");
  const limit = raw === null || raw === "" ? DEFAULT_LIMIT : /^\d+$/.test(raw) ? Number(raw) : 0;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw new ApiError("pagination_error", `limit must be a whole number from 1 to ${MAX_LIMIT}`);
  return { limit, after, before };
}

/** The account's orders newest first: ids are ULID-like, so their order is their creation order. */
function newestFirst(book: OrderBook): StoredOrder[] {
  return [...book.orders.values()].sort((a, b) =>
    a.order.id < b.order.id ? 1 : a.order.id > b.order.id ? -1 : 0,
  );
}

/** Index of the first order whose id is older than `id`, or with `orEqual` `id` itself. */
function firstOlder(list: StoredOrder[], id: string, orEqual: boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    const at = (list[mid] as StoredOrder).order.id;
    if (at > id || (at === id && !orEqual)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * GET /v2/order: a page of `limit` orders, newest first; `after` goes on to older ones, `before`
 * back to newer ones. Cursors are positions (an id need not exist): the ids of the page's last
 * (`after`) and first (`before`) orders; past the end the page is empty, without cursors.
 */
export function listOrders(book: OrderBook, params: URLSearchParams): Reply {
  const query = parseQuery(params);
  const list = newestFirst(book);
  let page: StoredOrder[];
  if (query.before !== undefined) {
    // The `limit` orders just newer than the cursor.
    const end = firstOlder(list, query.before, true);
    page = list.slice(Math.max(0, end - query.limit), end);
  } else {
    const start = query.after === undefined ? 0 : firstOlder(list, query.after, false);
    page = list.slice(start, start + query.limit);
  }
  const items = page.map((stored) => basicView(book.view(stored)));
  const first = page[0]?.order.id;
  const last = page[page.length - 1]?.order.id;
  const cursors = first && last ? { after: last, before: first } : {};
  const body = { items, pagination: { cursors, page: { limit: query.limit } } };
  return { status: 200, body: JSON.stringify(body) };
}
