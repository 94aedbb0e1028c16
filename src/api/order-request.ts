/** Body of POST /v2/order as the interface document shows it. */
export interface OrderRequest {
  payment_method: { type: "ACCOUNT_BALANCE"; currency: string };
  items: OrderRequestItem[];
  description?: string;
  metadata?: Record<string, string>;
}

export interface OrderRequestItem {
  /** A number in requests (a string in responses). */
  face_value: number;
  distribution_method: DistributionMethod;
  products: ProductChoice;
}

/**
 * How the payout link reaches its recipient (OpenAPI EmailDistribution, LinkDistribution,
 * RecipientDistribution; the link type is spelt `PAYOUT_LINK` there). Keys in this order: the
 * body of an e-mail item is the one sent before the others existed, byte for byte.
 */
export type DistributionMethod =
  | { type: "EMAIL"; email_address: string; template_id?: string }
  | { type: "PAYOUT_LINK"; template_id?: string }
  | {
      type: "RECIPIENT";
      recipient_reference: string;
      email_address: string;
      template_id?: string;
    };

/**
 * What the link is redeemed on (OpenAPI SingleProduct, MultipleProduct, PayoutSelectionTemplate):
 * one product, the recipient's choice among two or more of one currency, or a payout selection
 * template kept by the service.
 */
export type ProductChoice =
  | { type: "SINGLE"; value: string }
  | { type: "MULTIPLE"; values: string[] }
  | { type: "TEMPLATE"; template_id: string };

export type ExecutionMode = "async" | "sync";

export interface CreateOrderOptions {
  /** Required: the service refuses orders without one, and so does the client. */
  idempotencyKey: string;
  /** @defaultValue "async" */
  executionMode?: ExecutionMode;
  /** Overrides the client's configured X-Api-Version for this call. */
  apiVersion?: string;
  signal?: AbortSignal;
}
