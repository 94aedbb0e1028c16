import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The CSRF token of one dashboard process: put in every action form, checked on every action
 * POST. Another site can make the operator's browser post to the dashboard but cannot read a
 * page of it (no CORS; on loopback the Host guard stops DNS rebinding), so it cannot know the
 * token. A new process, a new token: a page left open across a restart asks for a reload.
 */
export class CsrfToken {
  readonly value = randomBytes(32).toString("base64url");

  matches(candidate: unknown): boolean {
    if (typeof candidate !== "string") return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.value);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
