import { randomBytes } from "node:crypto";
import express, { type Response, Router } from "express";
import type { Logger } from "../log.js";
import type { ActionToken } from "./action-token.js";
import { escapeHtml } from "./html-escape.js";
import { contentSecurityPolicy, layout } from "./page-layout.js";

export const LOGIN_PATH = "/login";

/**
 * `GET /login`, a form asking for the dashboard token, and `POST /login`, which sets the
 * session cookie when the token is right. The token travels in the POST's body only: never in
 * a URL, where logs, history and Referer headers would keep it.
 */
export function loginRoutes(options: { token: ActionToken; boardPath: string; log: Logger }) {
  const { token, boardPath, log } = options;
  const router = Router();
  router.get(LOGIN_PATH, (_req, res) => sendLoginPage(res, 200, boardPath));
  router.post(LOGIN_PATH, express.urlencoded({ extended: false, limit: "4kb" }), (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!token.matches(body.token)) {
      log.warn({ from: req.socket.remoteAddress }, "dashboard: login refused (wrong token)");
      sendLoginPage(res, 401, boardPath, "That is not the dashboard token.");
      return;
    }
    log.info({ from: req.socket.remoteAddress }, "dashboard: logged in");
    res.status(303).set("Set-Cookie", token.sessionCookie()).set("Location", "/campaigns").end();
  });
  return router;
}

function sendLoginPage(res: Response, status: number, boardPath: string, error?: string): void {
  const nonce = randomBytes(16).toString("base64");
  const refused = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";
  const main = `${refused}
<p>The actions of this dashboard need its token (<code>GIFTJOBS_DASHBOARD_TOKEN</code>).</p>
<form method="post" action="${LOGIN_PATH}"><label>Token <input type="password" name="token" autocomplete="current-password" required></label> <button type="submit">Log in</button></form>`;
  res
    .status(status)
    .set("Content-Security-Policy", contentSecurityPolicy(nonce))
    .set("Cache-Control", "no-store")
    .type("html")
    .send(
      layout({
        title: "log in",
        nonce,
        nav: `<a href="/campaigns">Campaigns</a> · <a href="${escapeHtml(boardPath)}">Queues</a>`,
        main,
      }),
    );
}
