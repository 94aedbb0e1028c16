import type { z } from "zod";
import { sha256 } from "../sha256.js";
import { errorFromResponse } from "./error-from-response.js";
import {
  ApiError,
  MalformedResponseError,
  RefusedRequestError,
  ServiceUnreachableError,
} from "./errors/index.js";
import { MAX_ESTIMATE_ITEMS, type OrderEstimateRequest } from "./order-estimate.js";
import type { CreateOrderOptions, OrderRequest } from "./order-request.js";
import { type ProductQuery, productSearchParams } from "./product-query.js";
import {
  type AcceptedOrder,
  AcceptedOrderSchema,
  type Balance,
  BalanceListSchema,
  BalanceSchema,
  type CatalogPage,
  CatalogPageSchema,
  type Order,
  type OrderEstimate,
  OrderEstimateSchema,
  OrderSchema,
  type RawProduct,
} from "./schemas.js";
import {
  fetchTransport,
  httpTransport,
  type Transport,
  TransportFailure,
  type TransportResponse,
} from "./transport.js";

export interface ApiClientOptions {
  /** Base URL; the client appends `/v2/...`. A trailing `/v2` is accepted too. */
  baseUrl: string;
  apiKey?: string;
  /** Dated API version sent as X-Api-Version; omitted when unset. */
  apiVersion?: string;
  /** Per-request timeout. @defaultValue 30000 */
  timeoutMs?: number;
  /** Sends the requests through this fetch instead of node:http (tests, proxies). */
  fetch?: typeof fetch;
  /** Told of every request once it ends (metrics). Whatever it throws is ignored. */
  onResponse?: (info: ResponseInfo) => void;
}

/** One finished request, for metrics. `path` has no query string. */
export interface ResponseInfo {
  method: string;
  path: string;
  /** HTTP status; 0 when no response came (network error, timeout, cancel). */
  status: number;
  durationMs: number;
}

/** A response the caller may inspect: parsed body plus status and the version the service applied. */
export interface ApiResponse<T> {
  status: number;
  body: T;
  apiVersion: string | null;
}

/** A response whose body is left as the bytes received (requestBytes). */
export interface BytesApiResponse {
  status: number;
  bytes: Buffer;
  /** X-Api-Version the service answered with, if any. */
  apiVersion: string | null;
}

/** Decodes as Response.text() does: UTF-8, a leading BOM dropped, bad bytes replaced. */
const UTF8 = new TextDecoder();

/** Result of createOrder: 200 with a completed order (sync), or 202 accepted (async). */
export type CreateOrderResult =
  | { kind: "completed"; status: number; order: Order }
  | { kind: "accepted"; status: number; order: AcceptedOrder };

/** Result of getOrder: the full order, or still processing. */
export type OrderLookup =
  | { kind: "order"; order: Order }
  | { kind: "processing"; order: AcceptedOrder };

interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Typed client of the Product Catalog and Order Service, over keep-alive connections.
 * Every failure is an ApiError subclass whose `outcome` tells retry-same-key, rate-limited,
 * systemic, final or key-conflict; transport failures and timeouts are retry-same-key.
 */
/**
 * A short fingerprint of an API key ("" without one): tells two keys apart in the ledger and
 * the order journal (docs/architecture/keys-and-exactly-once.md, "One key while an order may
 * exist") without keeping the key. 48 bits of a hash of a secret of far more: nothing of the key
 * can be read back.
 */
export function apiKeyFingerprint(apiKey: string | undefined): string {
  const key = apiKey?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  return key ? sha256(`giftjobs api key\n${key}`).slice(0, 8) : "";
}

export class ApiClient {
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly transport: Transport;
  private readonly apiKey: string | undefined;
  private fingerprint: string | undefined;

  constructor(private readonly options: ApiClientOptions) {
    // fetch would reject such a key on every call with a message that quotes it, and the
    // failure would pass for a transient network error: refuse it here, without quoting it.
    if (options.apiKey !== undefined && !isHeaderValue(options.apiKey)) {
      throw new TypeError(
        "apiKey has a character an HTTP header cannot carry (a control character or one beyond Latin-1)",
      );
    }
    this.base = options.baseUrl.replace(/\/+$/, "").replace(/\/v2$/, "");
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.transport = options.fetch ? fetchTransport(options.fetch) : httpTransport();
    // Sent trimmed, as fetch would send it: a key read from a file often ends in a newline.
    this.apiKey = options.apiKey?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  }

  /**
   * A short fingerprint of the API key ("" without one): tells two keys apart in the ledger
   * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist") without
   * keeping the key. 48 bits of a hash of a secret of far more: nothing of the key can be read back
   * from it.
   */
  get keyFingerprint(): string {
    // Asked before every order (START): hashed once, the key never changes.
    this.fingerprint ??= apiKeyFingerprint(this.apiKey);
    return this.fingerprint;
  }

  /** One page of GET /v2/product. Products are returned exactly as received. */
  async listProducts(query: ProductQuery = {}, signal?: AbortSignal): Promise<CatalogPage> {
    const params = productSearchParams(query);
    const raw = await this.request({ method: "GET", path: "/v2/product", query: params, signal });
    return parseWith(CatalogPageSchema, raw.body, "catalog page") as CatalogPage;
  }

  /**
   * Every page forward from `query.after` (or the start): yields each non-empty page and stops
   * on an empty one. Throws when a page is malformed or `after` does not advance.
   */
  async *pages(
    query: Omit<ProductQuery, "before"> = {},
    signal?: AbortSignal,
  ): AsyncGenerator<CatalogPage> {
    let after = query.after;
    for (;;) {
      const page = await this.listProducts({ ...query, after }, signal);
      if (page.catalog.length === 0) return;
      yield page;
      const next = page.pagination.cursors.after;
      if (!next) {
        throw new MalformedResponseError({
          status: 200,
          type: "malformed_page",
          message: `catalog page after ${after ?? "the start"} has products but no after cursor`,
        });
      }
      if (next === after) {
        throw new MalformedResponseError({
          status: 200,
          type: "cursor_not_advancing",
          message: `the after cursor did not advance (still ${JSON.stringify(next)}); stopping to avoid a loop`,
        });
      }
      after = next;
    }
  }

  async getProduct(code: string, signal?: AbortSignal): Promise<RawProduct> {
    const raw = await this.request({
      method: "GET",
      path: `/v2/product/${encodeURIComponent(code)}`,
      signal,
    });
    const body = raw.body as RawProduct;
    if (!body || typeof body !== "object" || typeof body.code !== "string") {
      throw malformed("product", "no code");
    }
    return body;
  }

  /** POST /v2/order. Refuses to send without an idempotency key or sync with several items. */
  async createOrder(
    request: OrderRequest,
    options: CreateOrderOptions,
  ): Promise<CreateOrderResult> {
    const mode = options.executionMode ?? "async";
    if (!options.idempotencyKey)
      throw new RefusedRequestError("an idempotency key is required to create an order");
    if (mode !== "async" && mode !== "sync")
      throw new RefusedRequestError(`execution mode must be async or sync, got ${mode}`);
    if (mode === "sync" && request.items.length !== 1) {
      throw new RefusedRequestError(
        `sync mode takes exactly one item, got ${request.items.length}`,
      );
    }
    const headers: Record<string, string> = {
      "x-idempotency-key": options.idempotencyKey,
      "x-execution-mode": mode,
    };
    if (options.apiVersion) headers["x-api-version"] = options.apiVersion;
    const raw = await this.request({
      method: "POST",
      path: "/v2/order",
      body: request,
      headers,
      signal: options.signal,
    });
    if (raw.status === 202) {
      return {
        kind: "accepted",
        status: raw.status,
        order: parseWith(AcceptedOrderSchema, raw.body, "accepted order"),
      };
    }
    return {
      kind: "completed",
      status: raw.status,
      order: parseWith(OrderSchema, raw.body, "order"),
    };
  }

  /** GET /v2/order/{id}: the full order, or `processing` while the service still works on it. */
  async getOrder(id: string, signal?: AbortSignal): Promise<OrderLookup> {
    const raw = await this.request({
      method: "GET",
      path: `/v2/order/${encodeURIComponent(id)}`,
      signal,
    });
    const body = raw.body as { items?: unknown; status?: unknown };
    if (body && typeof body === "object" && Array.isArray(body.items)) {
      return { kind: "order", order: parseWith(OrderSchema, body, "order") };
    }
    return { kind: "processing", order: parseWith(AcceptedOrderSchema, body, "order status") };
  }

  /**
   * POST /v2/order/estimate: what the items would cost as the service prices them; nothing is
   * ordered, so no idempotency key. Refuses to send no items or more than the service takes.
   */
  async estimateOrder(request: OrderEstimateRequest, signal?: AbortSignal): Promise<OrderEstimate> {
    const count = request.items.length;
    if (count < 1 || count > MAX_ESTIMATE_ITEMS)
      throw new RefusedRequestError(
        `an estimate takes 1 to ${MAX_ESTIMATE_ITEMS} items, got ${count}`,
      );
    const path = "/v2/order/estimate";
    const raw = await this.request({ method: "POST", path, body: request, signal });
    return parseWith(OrderEstimateSchema, raw.body, "order estimate");
  }

  /** GET /v2/balance?currency=XXX, or every balance when no currency is given. */
  async getBalance(currency: string, signal?: AbortSignal): Promise<Balance>;
  async getBalance(currency?: undefined, signal?: AbortSignal): Promise<Balance[]>;
  async getBalance(currency?: string, signal?: AbortSignal): Promise<Balance | Balance[]> {
    const query = currency ? new URLSearchParams({ currency }) : undefined;
    const raw = await this.request({ method: "GET", path: "/v2/balance", query, signal });
    if (currency) return parseWith(BalanceSchema, raw.body, "balance");
    return parseWith(BalanceListSchema, raw.body, "balance list");
  }

  /** Sends one request; maps every failure to an ApiError. Returns the parsed JSON body. */
  async request(spec: RequestSpec): Promise<ApiResponse<unknown>> {
    const response = await this.exchange(spec);
    const text = UTF8.decode(response.bytes);
    let body: unknown;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      throw malformed(`${spec.method} ${spec.path} response`, "body is not JSON", response.status);
    }
    return { status: response.status, body, apiVersion: response.header("x-api-version") };
  }

  /**
   * As request(), but the body is returned as the bytes received, neither decoded nor parsed:
   * for a caller that parses it in parts and stores parts of it verbatim (the catalog sync).
   * HTTP errors fail exactly as in request().
   */
  async requestBytes(spec: RequestSpec): Promise<BytesApiResponse> {
    const response = await this.exchange(spec);
    return {
      status: response.status,
      bytes: response.bytes,
      apiVersion: response.header("x-api-version"),
    };
  }

  /** One exchange; a transport failure or a status outside 2xx becomes an ApiError. */
  private async exchange(spec: RequestSpec): Promise<TransportResponse> {
    const query = spec.query && [...spec.query].length ? `?${spec.query}` : "";
    const headers: Record<string, string> = { accept: "application/json", ...spec.headers };
    if (this.apiKey) headers["x-api-key"] = this.apiKey;
    if (this.options.apiVersion && !headers["x-api-version"])
      headers["x-api-version"] = this.options.apiVersion;
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    const started = performance.now();
    let response: TransportResponse;
    try {
      response = await this.transport({
        method: spec.method,
        url: new URL(`${this.base}${spec.path}${query}`),
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: spec.signal,
        timeoutMs: this.timeoutMs,
      });
    } catch (error) {
      this.report(spec, 0, started);
      throw transportError(error, spec, this.timeoutMs, this.base);
    }
    this.report(spec, response.status, started);
    if (response.status < 200 || response.status >= 300)
      throw errorFromResponse(response.status, UTF8.decode(response.bytes));
    return response;
  }

  private report(spec: RequestSpec, status: number, started: number): void {
    if (!this.options.onResponse) return;
    const durationMs = performance.now() - started;
    try {
      this.options.onResponse({ method: spec.method, path: spec.path, status, durationMs });
    } catch {
      // Metrics must never change what a request did.
    }
  }
}

/** What fetch accepts as a header value, once it trims the surrounding whitespace. */
function isHeaderValue(value: string): boolean {
  const trimmed = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  for (let i = 0; i < trimmed.length; i++) {
    const code = trimmed.charCodeAt(i);
    if (code === 0 || code === 10 || code === 13 || code > 0xff) return false;
  }
  return true;
}

/** Network errors that mean nothing answers at the address: the URL is wrong or the service down. */
const UNREACHABLE: Record<string, { type: string; reason: (host: string) => string }> = {
  ECONNREFUSED: { type: "connection_refused", reason: (host) => `connection refused by ${host}` },
  ENOTFOUND: { type: "host_not_found", reason: (host) => `host ${host} not found` },
};

/** The base URL as messages show it: no user name or password, which may hold a secret. */
function shownUrl(base: string): URL {
  const url = new URL(base);
  url.username = "";
  url.password = "";
  return url;
}

function unreachable(error: TransportFailure, base: string): ServiceUnreachableError | undefined {
  const known = UNREACHABLE[error.detail];
  if (!known) return undefined;
  const url = shownUrl(base);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const host = error.detail === "ENOTFOUND" ? url.hostname : `${url.hostname}:${port}`;
  return new ServiceUnreachableError({
    url: url.href.replace(/\/$/, ""),
    reason: known.reason(host),
    type: known.type,
    cause: error,
  });
}

function transportError(error: unknown, spec: RequestSpec, timeoutMs: number, base: string): Error {
  if (!(error instanceof TransportFailure)) return error as Error;
  if (error.kind === "network") {
    const down = unreachable(error, base);
    if (down) return down;
  }
  const what = `${spec.method} ${spec.path}`;
  if (error.kind === "timeout") {
    return new ApiError("RequestTimeoutError", {
      status: 0,
      type: "request_timeout",
      message: `${what}: no response within ${timeoutMs} ms`,
    });
  }
  if (error.kind === "aborted") {
    // The caller cancelled (shutdown). For an order this is as ambiguous as a dropped connection.
    return new ApiError("NetworkError", {
      status: 0,
      type: "aborted",
      message: `${what}: cancelled`,
      cause: spec.signal?.reason,
    });
  }
  return new ApiError("NetworkError", {
    status: 0,
    type: "network_error",
    message: `${what}: ${error.detail}`,
  });
}

function malformed(what: string, problem: string, status = 200): MalformedResponseError {
  return new MalformedResponseError({
    status,
    type: "malformed_response",
    message: `${what}: ${problem}`,
  });
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw malformed(what, `${issue?.path.join(".") || "(body)"} ${issue?.message ?? "is invalid"}`);
}
