// The sandbox over real HTTP, as a client or an operator sees it: calls, order bodies, and the
// /_sandbox control routes.
import {
  type Product,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
  type WebhookStats,
} from "../../src/sandbox/index.js";

/** The X-Api-Key `call` sends unless told otherwise. */
export const KEY = "test-key";

/** A sandbox on a free port for the sandbox's own tests; each test file starts its own. */
export function start(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ products: 300, seed: 42, ...options });
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely.
  json: any;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  /** The X-Api-Key; null sends none. @defaultValue KEY */
  key?: string | null;
}

/** One HTTP call to the sandbox; the body is parsed as JSON when it is JSON. */
export async function call(sandbox: Sandbox, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEY : options.key;
  if (key !== null) headers["X-Api-Key"] = key;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }
  const res = await fetch(`${sandbox.url}${path}`, {
    method: options.method ?? "GET",
    headers,
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json } as Answer;
}

/** POST to a sandbox control route over HTTP, as an operator would; fails unless 2xx. */
export async function control(sandbox: Sandbox, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

export interface SandboxStats {
  total_requests: number;
  requests: Record<string, Record<string, number>>;
  /** Per route, the most requests in flight at once. */
  most_in_flight: Record<string, number>;
  orders: number;
  items: number;
  /** GET /v2/order/{id} answered, whatever the status: what webhooks are meant to save. */
  order_lookups: number;
  /** What the sandbox's webhook sender did; null when it sends none. */
  webhooks: WebhookStats | null;
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
  created_at: string;
  items: { distribution_method: { email_address: string } }[];
}

/** GET /_sandbox/orders: every order the sandbox holds, with its idempotency key. */
export async function sandboxOrders(sandbox: Sandbox): Promise<SandboxOrder[]> {
  const res = await fetch(`${sandbox.url}/_sandbox/orders`);
  return ((await res.json()) as { orders: SandboxOrder[] }).orders;
}

let keySerial = 0;

/** A fresh idempotency key, unique in this process. */
export function newKey(label = "key"): string {
  keySerial += 1;
  return `${label}-${process.pid}-${Date.now()}-${keySerial}`;
}

export function postOrder(
  sandbox: Sandbox,
  body: unknown,
  options: { key?: string; mode?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== "") headers["X-Idempotency-Key"] = options.key ?? newKey();
  if (options.mode !== undefined) headers["X-Execution-Mode"] = options.mode;
  return call(sandbox, "/v2/order", { method: "POST", headers, body });
}

/** An order item for `code` at `face`, sent by e-mail with template TPL-1. */
export function item(code: string, face: number, email = "jane.doe@example.com") {
  return {
    face_value: face,
    distribution_method: { type: "EMAIL", email_address: email, template_id: "TPL-1" },
    products: { type: "SINGLE", value: code },
  };
}

export function orderBody(currency: string, items: unknown[], extra: Record<string, unknown> = {}) {
  return { payment_method: { type: "ACCOUNT_BALANCE", currency }, items, ...extra };
}

/** A product of the sandbox's catalog matching `predicate`; fails the test when none does. */
export function findProduct(sandbox: Sandbox, predicate: (p: Product) => boolean): Product {
  const product = sandbox.state.catalog.products.find(predicate);
  if (!product) throw new Error("no product in the catalog matches");
  return product;
}

export const isLiveOrderable = (p: Product) => p.is_orderable && p.state === "LIVE";

/** A LIVE orderable open gift card in `currency` (USD by default). */
export function openCard(sandbox: Sandbox, currency = "USD"): Product {
  return findProduct(
    sandbox,
    (p) =>
      isLiveOrderable(p) && p.currency === currency && p.gift_card?.denominations.type === "open",
  );
}

/** A valid sync order body for an open USD gift card at its minimum value. */
export function validOrder(sandbox: Sandbox, extra: Record<string, unknown> = {}) {
  const product = openCard(sandbox);
  const face = Number(product.gift_card?.denominations.minimum_value);
  return orderBody("USD", [item(product.code, face)], extra);
}

/** Orders the sandbox made, and how many order creations it was asked for (refused ones too). */
export async function madeAndPosted(
  sandbox: Sandbox,
): Promise<{ made: SandboxOrder[]; posts: number }> {
  const requests = (await stats(sandbox)).requests["POST /v2/order"] ?? {};
  const posts = Object.values(requests).reduce((a, b) => a + b, 0);
  return { made: await sandboxOrders(sandbox), posts };
}
