import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { ConfigError } from "../errors/config-error.js";
import { registerSecret } from "../log.js";

export const DASHBOARD_TOKEN_ENV = "GIFTJOBS_DASHBOARD_TOKEN";

/**
 * Shorter than this is guessable; docs/operations.md, "Security", suggests
 * `openssl rand -base64 32`.
 */
const MIN_LENGTH = 16;

/** The login's cookie. */
export const SESSION_COOKIE = "giftjobs_dashboard";

/** Methods that read only; the others need the token. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** GIFTJOBS_DASHBOARD_TOKEN, trimmed; undefined when unset or empty. */
export function dashboardTokenFrom(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[DASHBOARD_TOKEN_ENV]?.trim() || undefined;
}

/**
 * The token the dashboard's actions need when it is reached from other machines
 * (docs/architecture/operators.md, "The dashboard's guards"): sent as `Authorization: Bearer
 * TOKEN`, or once to the login form, which sets a cookie. The cookie holds an HMAC of the token,
 * not the token; a new token logs every browser out.
 */
export class ActionToken {
  private readonly session: string;

  constructor(private readonly token: string) {
    if (token.length < MIN_LENGTH)
      throw new ConfigError(
        DASHBOARD_TOKEN_ENV,
        `must be at least ${MIN_LENGTH} characters: use a long random value (openssl rand -base64 32)`,
      );
    this.session = createHmac("sha256", token)
      .update("giftjobs dashboard session")
      .digest("base64url");
    registerSecret(token);
    registerSecret(this.session);
  }

  /** True when `candidate` is the token. */
  matches(candidate: unknown): boolean {
    return typeof candidate === "string" && sameText(candidate, this.token);
  }

  /** True when the request carries the token (Bearer) or the login's cookie. */
  allows(req: Request): boolean {
    const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "")?.[1];
    return this.matches(bearer) || sameText(cookieOf(req, SESSION_COOKIE) ?? "", this.session);
  }

  /**
   * The Set-Cookie of a login: never readable by a script (HttpOnly), never sent with a request
   * another site starts (SameSite=Strict), ended with the browser.
   */
  sessionCookie(): string {
    return `${SESSION_COOKIE}=${this.session}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** Answers 401 to a request that changes something without the token. */
  guard(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (SAFE_METHODS.has(req.method) || this.allows(req)) {
        next();
        return;
      }
      res
        .status(401)
        .set("WWW-Authenticate", 'Bearer realm="giftjobs dashboard"')
        .type("text/plain")
        .send(
          "giftjobs dashboard: actions need the dashboard token: log in at /login, or send Authorization: Bearer <token>\n",
        );
    };
  }
}

/**
 * Compares in constant time: both sides are hashed to one length first, so neither the
 * length nor the first differing character of a guess shows in the time taken.
 */
function sameText(a: string, b: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(a), digest(b)) && a.length > 0;
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}
