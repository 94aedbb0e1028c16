import type { ApiClient, OrderLookup } from "../api/client.js";
import { ApiError } from "../api/errors/index.js";
import {
  type ListedOrder,
  listOrders,
  MAX_ORDER_PAGE,
  nextOrderCursor,
} from "../api/order-list.js";
import type { Lookups } from "./lookups.js";

/** The service's orders of a time window, as GET /v2/order listed them. */
export interface WindowListing {
  /** Orders made from `from` on (and PROCESSING ones, which show no time), by id. */
  orders: Map<string, ListedOrder>;
  pages: number;
}

/** Whether the list has been seen newest first so far: a decrease and no increase of time. */
class ListOrder {
  private last: number | undefined;
  private decreased = false;
  private increased = false;

  note(time: number): void {
    if (this.last !== undefined) {
      if (time < this.last) this.decreased = true;
      if (time > this.last) this.increased = true;
    }
    this.last = time;
  }

  get newestFirst(): boolean {
    return this.decreased && !this.increased;
  }
}

function createdAt(order: ListedOrder): number | undefined {
  const time = order.created_at ? Date.parse(order.created_at) : Number.NaN;
  return Number.isFinite(time) ? time : undefined;
}

/**
 * Every order of the service made since `from` (ms), paging GET /v2/order forward to its end
 * (an empty page). The document does not say in what order the list comes: paging stops before
 * the end only once the list has shown itself newest first (times seen going down, never up)
 * and a page ends with an order older than `from`. Throws when a page is malformed or its
 * cursor does not advance (see nextOrderCursor).
 */
export async function listWindow(
  client: ApiClient,
  lookups: Lookups,
  from: number,
  onPage?: (pages: number, orders: number) => void,
): Promise<WindowListing> {
  const listing: WindowListing = { orders: new Map(), pages: 0 };
  const order = new ListOrder();
  const seen = new Set<string>();
  let after: string | undefined;
  for (;;) {
    const cursor = after;
    const page = await lookups.run((signal) =>
      listOrders(client, { limit: MAX_ORDER_PAGE, after: cursor }, signal),
    );
    listing.pages += 1;
    let oldest: number | undefined;
    for (const listed of page.items) {
      const time = createdAt(listed);
      if (time !== undefined) {
        order.note(time);
        oldest = time;
      }
      if (time === undefined || time >= from) listing.orders.set(listed.id, listed);
    }
    onPage?.(listing.pages, listing.orders.size);
    if (order.newestFirst && oldest !== undefined && oldest < from) return listing;
    after = nextOrderCursor(page, seen);
    if (after === undefined) return listing;
  }
}

/** GET /v2/order/{id} within the budget; undefined when the service does not know the order. */
export async function lookUpOrder(
  client: ApiClient,
  lookups: Lookups,
  id: string,
): Promise<OrderLookup | undefined> {
  try {
    return await lookups.run((signal) => client.getOrder(id, signal));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}
