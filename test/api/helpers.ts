import { ApiClient, type ApiClientOptions } from "../../src/api/client.js";
import type { OrderRequest, OrderRequestItem } from "../../src/api/order-request.js";
import {
  type Product,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
} from "../../src/sandbox/index.js";

export const KEY = "sk-test-api-suite";

/** A sandbox over real HTTP on a free port; each test file starts its own and closes it. */
export function start(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ products: 200, seed: 11, ...options });
}

/** A client of `sandbox` with the suite's key and a generous timeout. */
export function clientOf(sandbox: Sandbox, options: Partial<ApiClientOptions> = {}): ApiClient {
  return new ApiClient({ baseUrl: sandbox.url, apiKey: KEY, timeoutMs: 10_000, ...options });
}

export interface SandboxStats {
  total_requests: number;
  requests: Record<string, Record<string, number>>;
  orders: number;
  items: number;
}

/** GET /_sandbox/stats: what reached the server. */
export async function stats(sandbox: Sandbox): Promise<SandboxStats> {
  const res = await fetch(`${sandbox.url}/_sandbox/stats`);
  return (await res.json()) as SandboxStats;
}

export interface SandboxOrder {
  id: string;
  status: string;
  idempotency_key: string;
}

/** GET /_sandbox/orders: every order the sandbox holds, with its idempotency key. */
export async function sandboxOrders(sandbox: Sandbox): Promise<SandboxOrder[]> {
  const res = await fetch(`${sandbox.url}/_sandbox/orders`);
  return ((await res.json()) as { orders: SandboxOrder[] }).orders;
}

let serial = 0;

/** A fresh idempotency key, unique in this process. */
export function newKey(label = "k"): string {
  serial += 1;
  return `api-test-${label}-${process.pid}-${Date.now()}-${serial}`;
}

/** A LIVE orderable open gift card of the catalog in `currency`. */
export function openCard(sandbox: Sandbox, currency = "USD"): Product {
  const product = sandbox.state.catalog.products.find(
    (p) =>
      p.is_orderable &&
      p.state === "LIVE" &&
      p.currency === currency &&
      p.gift_card?.denominations.type === "open",
  );
  if (!product) throw new Error(`no orderable open ${currency} gift card in the catalog`);
  return product;
}

export function item(code: string, face: number, email = "jane.doe@example.com"): OrderRequestItem {
  return {
    face_value: face,
    distribution_method: { type: "EMAIL", email_address: email },
    products: { type: "SINGLE", value: code },
  };
}

/** A valid order of `count` items of an open USD gift card at its minimum value. */
export function validOrder(sandbox: Sandbox, count = 1, currency = "USD"): OrderRequest {
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

export { waitFor } from "../helpers/wait-for.js";
