import type { OrderBook } from "./order-book.js";
import type { Order } from "./types.js";

/**
 * An order as the list shows it (OpenAPI CompletedOrderWithBasicDetails): no items, no
 * metadata, which only GET /v2/order/{id} gives; a PROCESSING one as an IncompleteOrder.
 */
export function basicView(view: ReturnType<OrderBook["view"]>): Record<string, unknown> {
  if (view.status === "PROCESSING") return { ...view };
  const order = view as Order;
  const basic: Record<string, unknown> = {
    id: order.id,
    status: order.status,
    created_at: order.created_at,
  };
  if (order.completed_at) basic.completed_at = order.completed_at;
  basic.description = order.description;
  basic.payment_method = order.payment_method;
  basic.currency = order.currency;
  basic.total_price = order.total_price;
  basic.total_discount = order.total_discount;
  return basic;
}
