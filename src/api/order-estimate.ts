/** Body of POST /v2/order/estimate (OpenAPI OrderPriceRequest): items priced, nothing ordered. */
export interface OrderEstimateRequest {
  /** One currency per request: ACCOUNT_BALANCE pays in its products' currency. */
  payment_method: { type: "ACCOUNT_BALANCE"; currency: string };
  /** 1 to MAX_ESTIMATE_ITEMS items. */
  items: OrderEstimateItem[];
}

/** One item to price (OpenAPI OrderItemPriceRequest): a product and a face value. */
export interface OrderEstimateItem {
  /** A number in requests, as for POST /v2/order. */
  face_value: number;
  products: { type: "SINGLE"; value: string };
}

/** The most items one estimate takes (OpenAPI OrderPriceRequest, `items.maxItems`). */
export const MAX_ESTIMATE_ITEMS = 500;
