import { createHmac, timingSafeEqual } from "node:crypto";
import type { Request } from "express";

/** The login's cookie. */
const SESSION_COOKIE = "giftjobs_dashboard";

/** A login lasts a working day at most; then the form asks for the token again. */
const SESSION_HOURS = 12;

/**
 * The session cookie set by the login form (docs/architecture/operators.md, "The dashboard's
 * guards"): `NAME.ISSUED.MAC`, the user's name (base64url), when it was issued (ms, base 36),
 * and an HMAC-SHA256 of both under the dashboard's session key. It names a user and holds no
 * token; without the key nobody can make one, and one older than SESSION_HOURS is refused.
 */
export class SessionCookies {
  constructor(
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The Set-Cookie of a login: never readable by a script (HttpOnly), never sent with a request
   * another site starts (SameSite=Strict), ended with the browser.
   */
  setCookie(name: string): string {
    const body = `${Buffer.from(name).toString("base64url")}.${this.now().toString(36)}`;
    return `${SESSION_COOKIE}=${body}.${this.mac(body)}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** The Set-Cookie of a log-out. */
  clearCookie(): string {
    return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** The user named by the request's session cookie, when it is one of ours and still fresh. */
  nameOf(req: Request): string | undefined {
    const parts = cookieOf(req, SESSION_COOKIE)?.split(".");
    if (parts?.length !== 3) return undefined;
    const [name, issued, mac] = parts as [string, string, string];
    const expected = Buffer.from(this.mac(`${name}.${issued}`));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const age = this.now() - Number.parseInt(issued, 36);
    if (!(age >= -60_000 && age <= SESSION_HOURS * 3_600_000)) return undefined;
    return Buffer.from(name, "base64url").toString();
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}
