import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { DashboardUser, Role, TokenCheck } from "./dashboard-user.js";
import { attachUser, mayDo, roleRefusal, userOf } from "./request-user.js";
import { SessionCookies } from "./session-cookie.js";

/** Methods that read only; the others need a signed-in user. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const LOGIN_PATH = "/login";
export const LOGOUT_PATH = "/logout";

/**
 * Who a request is (docs/architecture/operators.md, "The dashboard's guards"): a token sent as
 * `Authorization: Bearer TOKEN`, or the session cookie the login form set. A token is never
 * taken from a URL (refuseTokenInUrl).
 */
export class SignIn {
  readonly cookies: SessionCookies;

  constructor(readonly tokens: TokenCheck) {
    this.cookies = new SessionCookies(tokens.sessionKey);
  }

  /** The user of a request, or undefined. */
  async userOf(req: Request): Promise<DashboardUser | undefined> {
    const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "")?.[1];
    const byToken = bearer === undefined ? undefined : await this.tokens.userOfToken(bearer);
    if (byToken) return byToken;
    const name = this.cookies.nameOf(req);
    return name === undefined ? undefined : this.tokens.userNamed(name);
  }

  /**
   * Attaches the request's user (request-user.ts) and refuses what needs one: a change always
   * (401), and with named users any page but the login form's (a page is sent to the form; the
   * JSON and bull-board's API get a 401).
   */
  guard(wantsJson: (req: Request) => boolean): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      void this.userOf(req).then((user) => {
        attachUser(res, user);
        const safe = SAFE_METHODS.has(req.method);
        if (user || (safe && !this.tokens.readingNeedsUser)) next();
        else if (safe && !wantsJson(req)) res.redirect(303, LOGIN_PATH);
        else unauthorized(res, this.tokens.readingNeedsUser);
      }, next);
    };
  }
}

function unauthorized(res: Response, named: boolean): void {
  res
    .status(401)
    .set("WWW-Authenticate", 'Bearer realm="giftjobs dashboard"')
    .type("text/plain")
    .send(
      named
        ? `giftjobs dashboard: sign in first: log in at ${LOGIN_PATH} with your token, or send Authorization: Bearer <token>\n`
        : `giftjobs dashboard: actions need the dashboard token: log in at ${LOGIN_PATH}, or send Authorization: Bearer <token>\n`,
    );
}

/** Refuses, 403 in one line, a change by a user without `role` (bull-board's retry and clean). */
export function changesNeed(role: Role, what: string): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const user = userOf(res);
    if (SAFE_METHODS.has(req.method) || mayDo(user, role)) {
      next();
      return;
    }
    res
      .status(user ? 403 : 401)
      .type("text/plain")
      .send(`giftjobs dashboard: ${user ? roleRefusal(user, role, what) : "sign in first"}\n`);
  };
}

/**
 * Refuses, 400, a request whose URL carries a token (`?token=`, `?access_token=`): nothing
 * here takes one from a URL, and one sent there is already in browser history and proxy logs.
 */
export function refuseTokenInUrl(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const query = req.originalUrl.split("?")[1] ?? "";
    const names = [...new URLSearchParams(query).keys()].map((k) => k.toLowerCase());
    if (!names.some((k) => k === "token" || k === "access_token")) {
      next();
      return;
    }
    res
      .status(400)
      .type("text/plain")
      .send(
        `giftjobs dashboard: a token never goes in a URL (it stays in history and logs): log in at ${LOGIN_PATH} or send Authorization: Bearer <token>, and replace that token\n`,
      );
  };
}
