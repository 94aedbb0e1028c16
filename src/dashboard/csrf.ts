import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The CSRF token of one dashboard process: put in every action form, checked on every action
 * POST. Another site can make the operator's browser post to the dashboard but cannot read a
 * page of it (no CORS; the Host guard stops DNS rebinding on every bind), so it cannot know the
 * token. A new process, a new token: a page left open across a restart asks for a reload. It is
 * no password: whoever loads a page has it, which is why actions reached from other machines
 * also need the dashboard token (action-token.ts).
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
