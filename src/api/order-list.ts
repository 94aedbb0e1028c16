import * as z from "zod";
import type { ApiClient } from "./client.js";
import { MalformedResponseError } from "./errors/index.js";
import { OrderSchema } from "./schemas.js";

const nullableString = z.string().nullish();

/**
 * An order as GET /v2/order lists it (OpenAPI CompletedOrderWithBasicDetails, or IncompleteOrder
 * while PROCESSING): no items and no metadata, which only GET /v2/order/{id} gives.
 */
const ListedOrderSchema = OrderSchema.pick({
  id: true,
  status: true,
  created_at: true,
  completed_at: true,
  description: true,
  currency: true,
  total_price: true,
}).extend({ message: nullableString });

export type ListedOrder = z.infer<typeof ListedOrderSchema>;

const OrderListPageSchema = z.looseObject({
  items: z.array(ListedOrderSchema),
  pagination: z.looseObject({
    cursors: z.looseObject({ after: nullableString, before: nullableString }).nullish(),
    page: z.looseObject({ limit: z.number().int() }).nullish(),
  }),
});
export type OrderListPage = z.infer<typeof OrderListPageSchema>;

/** The most orders a page of GET /v2/order may hold (OpenAPI: `limit` 1..500). */
export const MAX_ORDER_PAGE = 500;

/** One page of GET /v2/order: `limit` orders after (or before) a cursor. */
export async function listOrders(
  client: ApiClient,
  query: { limit?: number; after?: string; before?: string },
  signal?: AbortSignal,
): Promise<OrderListPage> {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  if (query.after !== undefined) params.set("after", query.after);
  if (query.before !== undefined) params.set("before", query.before);
  const raw = await client.request({ method: "GET", path: "/v2/order", query: params, signal });
  const parsed = OrderListPageSchema.safeParse(raw.body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new MalformedResponseError({
    status: raw.status,
    type: "malformed_response",
    message: `order list page: ${issue?.path.join(".") || "(page)"}: ${issue?.message}`,
  });
}

/**
 * The cursor of the page after `page`, read as the catalog pager reads its own
 * (docs/architecture/catalog.md, "The life of a catalog page"): undefined at the end (an empty
 * page, not a missing cursor); a page with orders but no cursor, or a cursor already used
 * (`seen`, which this adds it to: cursors are opaque, so "advancing" means "new"), is an error.
 */
export function nextOrderCursor(page: OrderListPage, seen: Set<string>): string | undefined {
  if (page.items.length === 0) return undefined;
  const next = page.pagination.cursors?.after;
  if (!next)
    throw new MalformedResponseError({
      status: 200,
      type: "malformed_page",
      message: "an order list page has orders but no after cursor",
    });
  if (seen.has(next))
    throw new MalformedResponseError({
      status: 200,
      type: "cursor_not_advancing",
      message:
        `the order list's after cursor did not advance (${JSON.stringify(next)} was already ` +
        "used); stopping to avoid a loop",
    });
  seen.add(next);
  return next;
}
