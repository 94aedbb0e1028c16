import type { ProductChoice } from "./order-request.js";

/** Body of POST /v2/order/estimate (OpenAPI OrderPriceRequest): items priced, nothing ordered. */
export interface OrderEstimateRequest {
  /** One currency per request: ACCOUNT_BALANCE pays in its products' currency. */
  payment_method: { type: "ACCOUNT_BALANCE"; currency: string };
  /** 1 to MAX_ESTIMATE_ITEMS items. */
  items: OrderEstimateItem[];
}

/**
 * One item to price (OpenAPI OrderItemPriceRequest): a face value and its products, one or the
 * recipient's choice of several (a payout selection template cannot be priced).
 */
export interface OrderEstimateItem {
  /** A number in requests, as for POST /v2/order. */
  face_value: number;
  products: EstimableChoice;
}

/** The products an estimate takes (OpenAPI SingleProduct, MultipleProduct). */
export type EstimableChoice = Exclude<ProductChoice, { type: "TEMPLATE" }>;

/** The most items one estimate takes (OpenAPI OrderPriceRequest, `items.maxItems`). */
export const MAX_ESTIMATE_ITEMS = 500;
