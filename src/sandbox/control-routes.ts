import { createHash } from "node:crypto";
import { ApiError } from "./api-error.js";
import { faultsToJson, parseFaults } from "./faults.js";
import { productUpdateState } from "./order-completion.js";
import { changePayouts, forgetOrder } from "./order-controls.js";
import type { Reply } from "./product-routes.js";
import type { CatalogMutation, SandboxState } from "./state.js";
import type { Denominations, Product } from "./types.js";
import { parseWebhookFaults } from "./webhook-faults.js";

/** Settings of the sandbox that POST /_sandbox/catalog can regenerate from. */
export interface CatalogSource {
  products: number;
  seed: number;
}

function ok(body: unknown): Reply {
  return { status: 200, body: JSON.stringify(body) };
}

function parseJsonObject(raw: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch {
    throw new ApiError("bad_request", "The body is not valid JSON");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError("bad_request", "The body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** Runs a state change, turning its error into a 400 naming the problem. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ApiError || !(error instanceof Error)) throw error;
    throw new ApiError("bad_request", error.message);
  }
}

/**
 * Tells API keys apart without showing them: the first 8 hex digits of their sha256.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function apiKeyId(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex").slice(0, 8);
}

function ordersJson(state: SandboxState): Reply {
  const orders = [...state.book.orders.values()].map((stored) => ({
    ...state.book.view(stored),
    idempotency_key: stored.idempotencyKey,
    api_key_id: stored.apiKey === undefined ? null : apiKeyId(stored.apiKey),
  }));
  return ok({ orders });
}

function statsJson(state: SandboxState): Reply {
  const stats = state.stats.toJson();
  // Every GET /v2/order/{id} answered, whatever its status: what webhooks are meant to save.
  const lookups = Object.values(stats.requests["GET /v2/order/{id}"] ?? {});
  return ok({
    ...stats,
    orders: state.book.orders.size,
    items: state.book.itemCount,
    order_lookups: lookups.reduce((sum, n) => sum + n, 0),
    webhooks: state.webhooks?.sender.stats ?? null,
  });
}

/** POST /_sandbox/webhooks/faults `{duplicates, out_of_order, drop, delay_ms}` (any subset). */
function changeWebhookFaults(state: SandboxState, raw: string): Reply {
  const sender = state.webhooks?.sender;
  if (!sender) throw new ApiError("bad_request", "the sandbox sends no webhooks (--webhook-url)");
  const update = guarded(() => parseWebhookFaults(parseJsonObject(raw)));
  return ok(sender.setFaults(update));
}

/**
 * POST /_sandbox/catalog: `{products?, seed?}` regenerates; `{catalog: [...]}` replaces;
 * `{mutate: {remove?, update?, add?}}` edits. Answers the new size.
 */
function changeCatalog(state: SandboxState, source: CatalogSource, raw: string): Reply {
  const body = parseJsonObject(raw);
  guarded(() => {
    if (Array.isArray(body.catalog)) state.setCatalog(body.catalog as Product[]);
    else if (body.products !== undefined || body.seed !== undefined) {
      const products = body.products ?? source.products;
      const seed = body.seed ?? source.seed;
      if (!Number.isInteger(products) || (products as number) < 0) {
        throw new RangeError("products must be a whole number >= 0");
      }
      if (!Number.isInteger(seed)) throw new RangeError("seed must be a whole number");
      source.products = products as number;
      source.seed = seed as number;
      state.regenerate(source.products, source.seed);
    }
    if (body.mutate !== undefined) state.mutateCatalog(body.mutate as CatalogMutation);
  });
  return ok({ products: state.catalog.size });
}

const DECIMAL = /^\d+(\.\d+)?$/;

function isDecimal(value: unknown): value is string {
  return typeof value === "string" && DECIMAL.test(value);
}

/** `denominations` of POST /_sandbox/products/{code} merged into `current`; a RangeError. */
function mergedDenominations<T extends Partial<Denominations>>(
  current: T,
  change: unknown,
  gift: boolean,
): T {
  if (change === null || typeof change !== "object" || Array.isArray(change))
    throw new RangeError("denominations must be an object");
  const out = { ...current } as Record<string, unknown>;
  for (const [field, value] of Object.entries(change)) {
    if (field === "minimum_value" || field === "maximum_value") {
      if (!isDecimal(value))
        throw new RangeError(`denominations.${field} must be a decimal string`);
    } else if (field === "type" && gift) {
      if (value !== "open" && value !== "fixed")
        throw new RangeError('denominations.type must be "open" or "fixed"');
    } else if (field === "available_list" && gift) {
      if (value !== null && !(Array.isArray(value) && value.length > 0 && value.every(isDecimal)))
        throw new RangeError("denominations.available_list must be decimal strings, or null");
    } else throw new RangeError(`denominations.${field} cannot be set on this product`);
    out[field] = value;
  }
  return out as T;
}

/**
 * POST /_sandbox/products/{code} `{is_orderable?, price_multiplier?, denominations?}`: changes
 * what the service's `product.update` tells of a product (`price_multiplier` is its
 * `discount_multiplier`; `denominations` are merged into its gift card's or payment's). With
 * webhooks on, a change sends a `product.update`. Answers the state as that message shows it.
 */
function changeProduct(state: SandboxState, code: string, raw: string): Reply {
  const body = parseJsonObject(raw);
  const product = state.catalog.get(code);
  if (!product) throw new ApiError("not_found", `No product ${code}`);
  const update: Partial<Product> & { code: string } = { code };
  guarded(() => {
    for (const [field, value] of Object.entries(body)) {
      if (field === "is_orderable") {
        if (typeof value !== "boolean") throw new RangeError("is_orderable must be true or false");
        update.is_orderable = value;
      } else if (field === "price_multiplier") {
        if (!isDecimal(value)) throw new RangeError("price_multiplier must be a decimal string");
        update.discount_multiplier = value;
      } else if (field === "denominations") {
        if (product.gift_card) {
          const denominations = mergedDenominations(product.gift_card.denominations, value, true);
          update.gift_card = { ...product.gift_card, denominations };
        } else if (product.payment) {
          const denominations = mergedDenominations(product.payment.denominations, value, false);
          update.payment = { ...product.payment, denominations };
        } else
          throw new RangeError(`product ${code} (${product.payout_type}) has no denominations`);
      } else {
        throw new RangeError(
          `unknown field ${field}: is_orderable, price_multiplier and denominations can be changed`,
        );
      }
    }
    state.mutateCatalog({ update: [update] });
  });
  const changed = state.catalog.get(code) as Product;
  return ok({ product_code: code, state: productUpdateState(changed) });
}

function changeFaults(state: SandboxState, raw: string): Reply {
  const update = guarded(() => parseFaults(parseJsonObject(raw)));
  return ok(faultsToJson(state.setFaults(update)));
}

/** POST /_sandbox/balances `{"USD": "100.00", ...}` sets balances. */
function changeBalances(state: SandboxState, raw: string): Reply {
  const body = parseJsonObject(raw);
  guarded(() => {
    for (const [currency, amount] of Object.entries(body)) {
      if (!/^[A-Z]{3}$/.test(currency) || typeof amount !== "string") {
        throw new RangeError(`balance ${currency} must be "CUR": "decimal string"`);
      }
      state.book.setBalance(currency, amount);
    }
  });
  return ok(state.book.allBalances(state.catalog));
}

/** POST /_sandbox/selection-templates `{"PT-1": ["CODE-A", "CODE-B"]}`: replaces them all. */
function changeSelectionTemplates(state: SandboxState, raw: string): Reply {
  const body = parseJsonObject(raw);
  guarded(() => state.book.selectionTemplates.replace(body));
  return ok(state.book.selectionTemplates.toJSON());
}

/**
 * POST /_sandbox/api-key `{"api_key": "new-key", "old_key"?: "invalid_api_key" | "forbidden"}`:
 * only that key is accepted from now on (a key rotation), the one it replaces answered 401 or
 * 403; `null`: any non-empty key. The key is not echoed.
 */
function changeApiKey(state: SandboxState, raw: string): Reply {
  const body = parseJsonObject(raw);
  const key = body.api_key;
  if (key !== null && (typeof key !== "string" || key.trim() === "")) {
    throw new ApiError("bad_request", "api_key must be a non-empty string or null");
  }
  const oldKey = body.old_key ?? "invalid_api_key";
  if (oldKey !== "invalid_api_key" && oldKey !== "forbidden") {
    throw new ApiError("bad_request", 'old_key must be "invalid_api_key" or "forbidden"');
  }
  state.rotateApiKey(key ?? undefined, oldKey);
  return ok({ api_key_required: key !== null });
}

/** The inspection and control routes under /_sandbox (no auth, no latency). */
export function controlRoute(
  state: SandboxState,
  source: CatalogSource,
  method: string,
  path: string,
  raw: string,
): Reply {
  const route = `${method} ${path}`;
  const product = /^POST \/_sandbox\/products\/([^/]+)$/.exec(route);
  if (product) {
    const code = guarded(() => decodeURIComponent(product[1] as string));
    return changeProduct(state, code, raw);
  }
  switch (route) {
    case "GET /_sandbox/orders":
      return ordersJson(state);
    case "GET /_sandbox/stats":
      return statsJson(state);
    case "POST /_sandbox/reset":
      state.reset();
      return ok({ reset: true });
    case "GET /_sandbox/faults":
      return ok(faultsToJson(state.faults));
    case "POST /_sandbox/faults":
      return changeFaults(state, raw);
    case "GET /_sandbox/catalog":
      return ok({ products: state.catalog.size, seed: source.seed });
    case "POST /_sandbox/catalog":
      return changeCatalog(state, source, raw);
    case "POST /_sandbox/webhooks/faults":
      return changeWebhookFaults(state, raw);
    case "POST /_sandbox/balances":
      return changeBalances(state, raw);
    case "POST /_sandbox/api-key":
      return changeApiKey(state, raw);
    case "GET /_sandbox/selection-templates":
      return ok(state.book.selectionTemplates.toJSON());
    case "POST /_sandbox/selection-templates":
      return changeSelectionTemplates(state, raw);
    case "POST /_sandbox/payouts":
      return changePayouts(state, parseJsonObject(raw));
    case "POST /_sandbox/orders/forget":
      return forgetOrder(state, parseJsonObject(raw));
    default:
      throw new ApiError("not_found", `No sandbox route ${route}`);
  }
}
