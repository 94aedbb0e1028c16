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
  distribution_method: { type: "EMAIL"; email_address: string; template_id?: string };
  products: { type: "SINGLE"; value: string };
}

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
