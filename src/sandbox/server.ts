import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError } from "./api-error.js";
import { type CatalogSource, controlRoute } from "./control-routes.js";
import { estimateOrder } from "./estimate-route.js";
import type { Faults } from "./faults.js";
import { generateCatalog } from "./generate-catalog.js";
import { header, readBody, sendError, sendJson, sleep } from "./http-util.js";
import { type OrderAttemptListener, watchOrderAttempt } from "./order-attempts.js";
import { WebhookNotifier } from "./order-completion.js";
import { listOrders } from "./order-list.js";
import { createOrder } from "./order-route.js";
import {
  getProduct,
  listCategories,
  listCountries,
  listProducts,
  type Reply,
} from "./product-routes.js";
import { type OldKeyAnswer, SandboxState } from "./state.js";
import type { Product } from "./types.js";
import type { WebhookFaults } from "./webhook-faults.js";
import { WebhookSender } from "./webhook-sender.js";

/** @internal exported for its tests (docs/development.md, "Exports for tests") */
export const LATEST_VERSION = "2024-02-05";
/** Versions the sandbox serves; the OpenAPI document lists no earlier live one. */
const KNOWN_VERSIONS = new Set([LATEST_VERSION]);
const REMOVED_VERSIONS = new Set(["2023-07-27", "2023-01-16"]);

export interface SandboxOptions extends Partial<Faults> {
  /** 0 picks a free port. @defaultValue 0 */
  port?: number;
  /** @defaultValue `127.0.0.1` */
  host?: string;
  /** Size of the generated catalog. @defaultValue 250 */
  products?: number;
  /** Seed of the generated catalog. @defaultValue 1 */
  seed?: number;
  /** A catalog to serve instead of a generated one. */
  catalog?: Product[];
  /**
   * The only key accepted; when unset any non-empty X-Api-Key is accepted. Changed at run time
   * by `setApiKey` or POST /_sandbox/api-key (a key rotation).
   */
  apiKey?: string;
  /** Starting balances, e.g. `{USD: "100000"}`; other currencies get 1,000,000,000. */
  balances?: Record<string, string>;
  /**
   * The account's payout selection templates, id -> two or more product codes (orders' TEMPLATE
   * products). Changed at run time by POST /_sandbox/selection-templates. @defaultValue none
   */
  selectionTemplates?: Record<string, string[]>;
  /** Seed of the fault draws (fail rate, drop rate, latency jitter). @defaultValue 1 */
  faultSeed?: number;
  /** Where to POST webhooks (`order.completion`, `product.update`); unset: none are sent. */
  webhookUrl?: string;
  /** `whsec_` + base64 key; required with `webhookUrl`. */
  webhookSecret?: string;
  /** Faults of the webhook deliveries (see webhook-faults.ts). */
  webhookFaults?: Partial<WebhookFaults>;
  /** Attempts per webhook message in all. @defaultValue 5 */
  webhookAttempts?: number;
  /** Wait before a webhook's first retry, doubling each retry. @defaultValue 1000 */
  webhookRetryBaseMs?: number;
  /** Told how each POST /v2/order ended (tests that trace what the service saw). */
  onOrderAttempt?: OrderAttemptListener;
}

export interface Sandbox {
  /** Base URL, without `/v2`: `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  host: string;
  /** The in-memory state: catalog, orders and balances, faults, idempotency cache, stats. */
  state: SandboxState;
  /** The webhook sender, when `webhookUrl` is set: its stats, faults, `idle()`. */
  readonly webhooks: WebhookSender | undefined;
  /**
   * Starts sending webhooks as `webhookUrl` and `webhookSecret` at start would (the receiver
   * may only exist after the sandbox); an earlier sender is closed first.
   */
  setWebhooks(
    options: Pick<
      SandboxOptions,
      "webhookUrl" | "webhookSecret" | "webhookFaults" | "webhookAttempts" | "webhookRetryBaseMs"
    >,
  ): Promise<WebhookSender>;
  setCatalog(products: Product[]): void;
  /**
   * Accepts only `apiKey` from now on (undefined: any non-empty key), as POST /_sandbox/api-key
   * does: a key rotation. The key it replaces is then answered 401 invalid_api_key, or with
   * `oldKey: "forbidden"` 403 forbidden (a key kept without the right to order). Idempotency
   * keys stay scoped to the API key they came with.
   */
  setApiKey(apiKey: string | undefined, options?: { oldKey?: OldKeyAnswer }): void;
  /** Changes faults and limits at run time (as POST /_sandbox/faults). */
  setFaults(update: Partial<Faults>): Faults;
  /** As POST /_sandbox/reset. */
  reset(): void;
  close(): Promise<void>;
}

/** Route name for the stats: ids and codes folded into a placeholder. */
function routeName(method: string, path: string): string {
  const folded = path
    .replace(/^\/v2\/order\/(?!estimate$)[^/]+$/, "/v2/order/{id}")
    .replace(/^\/v2\/product\/(?!countries$|categories$)[^/]+$/, "/v2/product/{code}");
  return `${method} ${folded}`;
}

/** The caller's API key, or the refusal: 401 without one or a wrong one, 403 a forbidden one. */
function checkAuth(req: IncomingMessage, state: SandboxState): string {
  const key = header(req, "x-api-key");
  if (!key) throw new ApiError("unauthorized", "The X-Api-Key header is required");
  if (state.apiKey === undefined || key === state.apiKey) return key;
  if (state.forbiddenKeys.has(key)) {
    throw new ApiError("forbidden", "This API key is not allowed to do this");
  }
  throw new ApiError("invalid_api_key", "The API key is not valid");
}

function checkVersion(version: string | undefined): void {
  if (version === undefined || KNOWN_VERSIONS.has(version)) return;
  if (REMOVED_VERSIONS.has(version)) {
    throw new ApiError("version_removed", `API version ${version} has been removed`);
  }
  throw new ApiError("invalid_version", `Unknown API version ${version}`);
}

/** The read-only /v2 routes. */
function readRoute(state: SandboxState, method: string, url: URL): Reply {
  const path = url.pathname;
  if (method === "GET") {
    if (path === "/v2/ping") return { status: 200, body: '{"message":"pong"}' };
    if (path === "/v2/product") return listProducts(state, url.searchParams);
    if (path === "/v2/product/countries") return listCountries(state);
    if (path === "/v2/product/categories") return listCategories(state);
    if (path.startsWith("/v2/product/")) {
      return getProduct(state, decodeURIComponent(path.slice("/v2/product/".length)));
    }
    if (path === "/v2/balance") return balance(state, url.searchParams);
    if (path === "/v2/order") return listOrders(state.book, url.searchParams);
    if (path.startsWith("/v2/order/")) return getOrder(state, path.slice("/v2/order/".length));
  }
  throw new ApiError("not_found", `No route ${method} ${path}`);
}

function balance(state: SandboxState, params: URLSearchParams): Reply {
  const currency = params.get("currency");
  if (currency === null || currency === "") {
    return { status: 200, body: JSON.stringify(state.book.allBalances(state.catalog)) };
  }
  if (!/^[A-Z]{3}$/.test(currency)) {
    throw new ApiError("bad_request", "currency must be an ISO 4217 code");
  }
  return { status: 200, body: JSON.stringify(state.book.balance(currency)) };
}

function getOrder(state: SandboxState, id: string): Reply {
  const stored = state.book.orders.get(decodeURIComponent(id));
  if (!stored) throw new ApiError("not_found", `No order ${id}`);
  return { status: 200, body: JSON.stringify(state.book.view(stored)) };
}

/**
 * Starts the sandbox of the service: a real HTTP server on `host:port` with in-memory state.
 * Resolves once it listens.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const source: CatalogSource = { products: options.products ?? 250, seed: options.seed ?? 1 };
  const products = options.catalog ?? generateCatalog(source);
  const faults: Partial<Faults> = {};
  for (const name of [
    "failRate",
    "dropRate",
    "failAfterRate",
    "failAfterStatus",
    "refuseEmails",
    "latencyMs",
    "orderRateLimit",
    "asyncCompleteMs",
    "asyncFailRate",
    "estimateFailRate",
    "productPageFault",
    "emptyPageCursors",
  ] as const) {
    if (options[name] !== undefined) Object.assign(faults, { [name]: options[name] });
  }
  const state = new SandboxState(products, faults, options.balances ?? {}, options.faultSeed ?? 1);
  state.webhooks = webhookNotifier(options, state);
  state.apiKey = options.apiKey;
  if (options.selectionTemplates) state.book.selectionTemplates.replace(options.selectionTemplates);

  async function handleV2(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const version = header(req, "x-api-version");
    res.setHeader("X-Api-Version", version ?? LATEST_VERSION);
    const delayMs = state.dice.latency(state.faults.latencyMs);
    const method = req.method ?? "GET";
    if (method === "POST" && url.pathname === "/v2/order") {
      const dropped = options.onOrderAttempt
        ? watchOrderAttempt(req, res, options.onOrderAttempt)
        : () => {};
      let apiKey: string;
      try {
        apiKey = checkAuth(req, state);
        checkVersion(version);
      } catch (error) {
        await sleep(delayMs);
        throw error;
      }
      const onDrop = () => {
        dropped();
        state.stats.record(routeName(method, url.pathname), "dropped");
      };
      return createOrder({ state, req, res, apiKey, delayMs, onDrop });
    }
    await sleep(delayMs);
    checkAuth(req, state);
    checkVersion(version);
    const reply =
      method === "POST" && url.pathname === "/v2/order/estimate"
        ? estimateOrder(state, await readBody(req))
        : readRoute(state, method, url);
    sendJson(res, reply.status, reply.body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://sandbox");
    const method = req.method ?? "GET";
    try {
      if (url.pathname.startsWith("/_sandbox/")) {
        const raw = method === "POST" ? await readBody(req) : "";
        const reply = controlRoute(state, source, method, url.pathname, raw);
        return sendJson(res, reply.status, reply.body);
      }
      if (url.pathname.startsWith("/v2/")) {
        // Counted when the answer is written; a dropped connection is counted by onDrop.
        const route = routeName(method, url.pathname);
        res.on("finish", () => state.stats.record(route, res.statusCode));
        // In flight until the answer is written or the connection is cut ("close" comes once).
        res.once("close", state.stats.enter(route));
        return await handleV2(req, res, url);
      }
      throw new ApiError("not_found", `No route ${method} ${url.pathname}`);
    } catch (error) {
      sendError(res, error);
    }
  }

  const server = createServer({ keepAlive: true }, (req, res) => {
    void handle(req, res);
  });
  // Longer than clients' idle keep-alive, so the server is never the one to close a reused socket.
  server.keepAliveTimeout = 65_000;
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    host,
    state,
    get webhooks() {
      return state.webhooks?.sender;
    },
    setWebhooks: async (webhookOptions) => {
      await state.webhooks?.close();
      state.webhooks = webhookNotifier({ faultSeed: options.faultSeed, ...webhookOptions }, state);
      if (!state.webhooks) throw new RangeError("webhookUrl is required");
      return state.webhooks.sender;
    },
    setCatalog: (list) => state.setCatalog(list),
    setApiKey: (apiKey, rotation) => state.rotateApiKey(apiKey, rotation?.oldKey),
    setFaults: (update) => state.setFaults(update),
    reset: () => state.reset(),
    close: async () => {
      await state.webhooks?.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/** The webhook sender of `webhookUrl`; a RangeError naming the option when it cannot be made. */
function webhookNotifier(
  options: SandboxOptions,
  state: SandboxState,
): WebhookNotifier | undefined {
  if (options.webhookUrl === undefined) return undefined;
  if (options.webhookSecret === undefined) {
    throw new RangeError("webhookSecret (--webhook-secret) is required with webhookUrl");
  }
  const sender = new WebhookSender({
    url: options.webhookUrl,
    secret: options.webhookSecret,
    faults: options.webhookFaults,
    attempts: options.webhookAttempts,
    retryBaseMs: options.webhookRetryBaseMs,
    seed: options.faultSeed,
  });
  return new WebhookNotifier(sender, state.book);
}
