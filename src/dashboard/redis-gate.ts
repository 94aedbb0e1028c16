import { randomBytes } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { RedisConnection } from "../redis/connection.js";
import { escapeHtml } from "./html-escape.js";
import { contentSecurityPolicy, layout } from "./page-layout.js";

/** How long a request waits for Redis to answer PING before the page says it does not. */
const REDIS_ANSWER_MS = 1500;

export interface RedisGateOptions {
  redis: RedisConnection;
  /** The plain line: "Redis at HOST:PORT does not answer: is it running? (...)". */
  message: string;
  /** Paths answered in JSON rather than HTML (campaigns.json, bull-board's API). */
  wantsJson: (req: Request) => boolean;
  /** @defaultValue REDIS_ANSWER_MS */
  answerMs?: number;
}

/**
 * Every page at once while Redis is away, instead of a page that waits for reconnects and then
 * shows ioredis's sentence (docs/architecture/redis.md, "Redis outages"): a connection that is
 * not `ready` is a 503 at once; a ready one must answer PING within `answerMs` (a frozen or
 * overloaded Redis), else the same 503. The PING is one round trip per request, nothing beside
 * the page's own reads.
 */
export function redisGate(options: RedisGateOptions): RequestHandler {
  const answerMs = options.answerMs ?? REDIS_ANSWER_MS;
  return (req: Request, res: Response, next: NextFunction) => {
    void answers(options.redis, answerMs).then((ok) => {
      if (ok) next();
      else sendRedisDown(res, options.message, options.wantsJson(req));
    });
  };
}

/** True when Redis answers PING within `ms`; false at once when the connection is not ready. */
async function answers(redis: RedisConnection, ms: number): Promise<boolean> {
  if (redis.status !== "ready") return false;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([redis.ping().then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** The 503 of a dashboard whose Redis does not answer: the line, in a page or in JSON. */
export function sendRedisDown(res: Response, message: string, json: boolean): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(503).set("Cache-Control", "no-store").set("Retry-After", "5");
  if (json) {
    res.json({ error: message });
    return;
  }
  const nonce = randomBytes(16).toString("base64");
  const main = `<p class="error">${escapeHtml(message)}</p>
<p>Nothing is lost: this page answers again as soon as Redis does. Reload it then.</p>`;
  res
    .set("Content-Security-Policy", contentSecurityPolicy(nonce))
    .type("html")
    .send(layout({ title: "giftjobs: Redis does not answer", nonce, main }));
}
