import { access } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import {
  legacyOverridesPath,
  type ProductOverrideStore,
  ProductOverrides,
} from "../catalog/product-overrides.js";
import { Ledger } from "../ledger/ledger.js";
import { type Logger, registerSecret } from "../log.js";
import { isRedisAway } from "../redis/outage-reporter.js";
import {
  type ApplyMessageDeps,
  applyMessage,
  completionOrderId,
  messageType,
} from "./apply-message.js";
import { claimMessage, messageIdKey } from "./claim-message.js";
import { OrderIndex } from "./order-index.js";
import type { RemoteOrderOutcome } from "./remote-order-state.js";
import type { WebhookMessageType, WebhookResult } from "./webhook-result.js";

/** Options of `startWebhookReceiver`. */
export interface WebhookReceiverOptions {
  redis: Redis;
  prefix: string;
  /**
   * The data dir, only to warn of a `catalog/overrides.json` left there (product states are kept
   * in Redis now, under the prefix).
   */
  dataDir?: string;
  /**
   * Where product.update's states go: PostgreSQL's table when GIFTJOBS_DATABASE_URL is set.
   * @defaultValue the Redis hash under `prefix`
   */
  productOverrides?: ProductOverrideStore;
  /** `whsec_...` (see webhookSecretFrom). */
  secret: string;
  log: Logger;
  /** 0 picks a free port. */
  port: number;
  /** @defaultValue `127.0.0.1` */
  host?: string;
  storePayoutUrls?: boolean;
  /** How long an applied webhook-id is remembered. @defaultValue 259200 (3 days) */
  dedupeSeconds?: number;
  /** Told of each request: its message type and what was done (metrics). */
  onMessage?: (type: WebhookMessageType, result: WebhookResult) => void;
  /** Told when a message moved an order to its end (giftjobs_orders_total is the ledger's). */
  onOrderEnded?: (outcome: RemoteOrderOutcome) => void;
}

export interface RunningReceiver {
  /** `http://host:port/webhooks` */
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

const STATUS: Record<WebhookResult, number> = {
  applied: 200,
  duplicate: 200,
  unknown_order: 200,
  already_ended: 200,
  mismatch: 200,
  stale: 200,
  not_yet: 409,
  unauthorized: 401,
  bad_request: 400,
  error: 500,
};

class BodyTooLarge extends Error {}

function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new BodyTooLarge());
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function headerOf(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/** A message's signed headers, under the names the Standard Webhooks verifier reads. */
interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The message's id, timestamp and signatures under the Standard Webhooks names the verifier
 * reads: Svix's own (`svix-id`, `svix-timestamp`, `svix-signature`, what the service's portal
 * sends) when the request carries any of them, the `webhook-*` ones otherwise. One set is read
 * whole, never mixed. The signature header may hold several signatures, space-separated (a
 * rotated secret): any one valid is enough.
 */
function signedHeaders(req: IncomingMessage): SignedHeaders {
  const svix = ["svix-id", "svix-timestamp", "svix-signature"].some((h) => h in req.headers);
  const from = svix ? "svix" : "webhook";
  return {
    "webhook-id": headerOf(req, `${from}-id`),
    "webhook-timestamp": headerOf(req, `${from}-timestamp`),
    "webhook-signature": headerOf(req, `${from}-signature`),
  };
}

/**
 * The receiver of the service's webhooks (docs/architecture/webhooks.md, "Webhooks"). Each POST
 * is verified on its raw bytes (signature and timestamp, the Standard Webhooks scheme Svix uses,
 * under Svix's header names or the standard ones) before anything is parsed; a bad one is 401
 * and changes nothing. A webhook-id is claimed (SET NX with a TTL, in
 * the script that also reads the order index: claim-message.ts) before applying and released when
 * the message could not be applied, so the service's retry is applied then; a 2xx is answered
 * only once the ledger (or the product overrides) holds the change.
 */
export async function startWebhookReceiver(
  options: WebhookReceiverOptions,
): Promise<RunningReceiver> {
  // A library caller may not have read it with webhookSecretFrom: registered here too.
  registerSecret(options.secret);
  const verifier = new Webhook(options.secret);
  if (options.dataDir !== undefined) await warnOfLegacyOverrides(options.dataDir, options.log);
  const deps: ApplyMessageDeps = {
    ledger: new Ledger(options.redis, options.prefix),
    orderIndex: new OrderIndex(options.redis, options.prefix),
    productOverrides:
      options.productOverrides ?? new ProductOverrides(options.redis, options.prefix),
    log: options.log,
    storePayoutUrls: options.storePayoutUrls,
    onOrderEnded: options.onOrderEnded,
  };
  const ttl = options.dedupeSeconds ?? 259_200;
  const seenKey = (id: string) => messageIdKey(options.prefix, id);

  async function handle(
    req: IncomingMessage,
  ): Promise<{ type: WebhookMessageType; result: WebhookResult }> {
    const raw = await readRaw(req);
    const headers = signedHeaders(req);
    try {
      // Verified on the bytes received, before anything reads them. The error is not kept: it
      // says only why, and nothing of the key.
      verifier.verify(raw, headers, { jsonParse: false });
    } catch {
      return { type: "unknown", result: "unauthorized" };
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return { type: "unknown", result: "bad_request" };
    }
    const id = headers["webhook-id"];
    if (!/^[\w.:-]{1,200}$/.test(id)) return { type: "unknown", result: "bad_request" };
    // The claim and the order index's entry go in one script (one round trip); the order it
    // names is read next (apply-message.ts), then ended.
    const orderId = completionOrderId(body);
    const claim = await claimMessage(options.redis, options.prefix, {
      id,
      ttlSeconds: ttl,
      orderId,
    });
    if (!claim.claimed) return { type: messageType(body), result: "duplicate" };
    let applied: Awaited<ReturnType<typeof applyMessage>>;
    try {
      applied = await applyMessage(deps, body, orderId === undefined ? undefined : claim, id);
    } catch (error) {
      await options.redis.del(seenKey(id)).catch(() => undefined);
      throw error;
    }
    // Not applied and to be sent again: the id must not look applied when it comes back.
    if (STATUS[applied.result] >= 300) await options.redis.del(seenKey(id));
    return applied;
  }

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://receiver").pathname;
    if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (req.method !== "POST" || (path !== "/webhooks" && path !== "/")) {
      res.writeHead(404).end();
      return;
    }
    let outcome: { type: WebhookMessageType; result: WebhookResult };
    try {
      outcome = await handle(req);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        res.writeHead(413).end();
        return;
      }
      // Redis away: the outage has its own line (OutageReporter); the service sends again.
      if (!isRedisAway(error))
        options.log.error(
          { err: error },
          "could not apply a webhook; the service will send it again",
        );
      outcome = { type: "unknown", result: "error" };
    }
    options.onMessage?.(outcome.type, outcome.result);
    const status = STATUS[outcome.result];
    res.writeHead(status, { "content-type": "application/json" });
    res.end(`${JSON.stringify({ result: outcome.result })}\n`);
  }

  const server: Server = createServer((req, res) => void respond(req, res));
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/webhooks`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/**
 * Product states were kept in `catalog/overrides.json` of the receiver's data dir before they
 * moved to Redis. That file is not read (its states were of one snapshot, and the next sync has
 * them): one warning, so that nobody counts on it.
 */
async function warnOfLegacyOverrides(dataDir: string, log: Logger): Promise<void> {
  const path = legacyOverridesPath(dataDir);
  const found = await access(path).then(
    () => true,
    () => false,
  );
  if (found)
    log.warn(
      { path },
      "product states pushed by the service are kept in Redis now: this file is no longer " +
        "read (the next catalog sync has what it held) and can be deleted",
    );
}
