// The ApiClient's side of the API tests: a sandbox, a client of it, typed order requests.
import { ApiClient, type ApiClientOptions } from "../../src/api/client.js";
import type { OrderRequest, OrderRequestItem } from "../../src/api/order-request.js";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import { openCard } from "./sandbox.js";

/** The API key of the API suite's clients. */
export const KEY = "sk-test-api-suite";

/** A sandbox over real HTTP on a free port; each test file starts its own and closes it. */
export function start(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ products: 200, seed: 11, ...options });
}

/** A client of `sandbox` with the suite's key and a generous timeout. */
export function clientOf(sandbox: Sandbox, options: Partial<ApiClientOptions> = {}): ApiClient {
  return new ApiClient({ baseUrl: sandbox.url, apiKey: KEY, timeoutMs: 10_000, ...options });
}

/** An item sent by e-mail to one product, as every item was before the other kinds. */
export type EmailItem = OrderRequestItem & {
  distribution_method: { type: "EMAIL"; email_address: string; template_id?: string };
  products: { type: "SINGLE"; value: string };
};

/** An order of e-mail items of one product each. */
export type EmailOrderRequest = OrderRequest & { items: EmailItem[] };

/** An order item for `code` at `face`, sent by e-mail (no template). */
export function item(code: string, face: number, email = "jane.doe@example.com"): EmailItem {
  return {
    face_value: face,
    distribution_method: { type: "EMAIL", email_address: email },
    products: { type: "SINGLE", value: code },
  };
}

/** A valid order of `count` items of an open gift card in `currency` at its minimum value. */
export function validOrder(sandbox: Sandbox, count = 1, currency = "USD"): EmailOrderRequest {
  const product = openCard(sandbox, currency);
  const face = Number(product.gift_card?.denominations.minimum_value);
  return {
    payment_method: { type: "ACCOUNT_BALANCE", currency },
    items: Array.from({ length: count }, () => item(product.code, face)),
  };
}

/** The rejection of `promise`, failing when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the promise to reject, but it resolved");
}
