import { randomBytes } from "node:crypto";
import express, { type Response, Router } from "express";
import type { Logger } from "../log.js";
import type { DashboardUser } from "./dashboard-user.js";
import { escapeHtml } from "./html-escape.js";
import { contentSecurityPolicy, layout } from "./page-layout.js";
import { LOGIN_PATH, LOGOUT_PATH, type SignIn } from "./sign-in.js";

/**
 * `GET /login`, a form asking for a token, `POST /login`, which sets the session cookie when
 * the token is a user's (the shared one's, or a named user's), and `POST /logout`, which ends
 * it. The token travels in the POST's body only: never in a URL, where logs, history and
 * Referer headers would keep it.
 */
export function loginRoutes(options: { signIn: SignIn; boardPath: string; log: Logger }) {
  const { signIn, boardPath, log } = options;
  const named = signIn.tokens.readingNeedsUser;
  const router = Router();
  router.get(LOGIN_PATH, (_req, res) => sendLoginPage(res, 200, { boardPath, named }));
  router.post(
    LOGIN_PATH,
    express.urlencoded({ extended: false, limit: "4kb" }),
    (req, res, next) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const token = typeof body.token === "string" ? body.token.trim() : "";
      void signIn.tokens.userOfToken(token).then((user) => {
        const from = req.socket.remoteAddress;
        if (!user) {
          log.warn({ from }, "dashboard: login refused (wrong token)");
          const error = named ? "That is no user's token." : "That is not the dashboard token.";
          sendLoginPage(res, 401, { boardPath, named, error });
          return;
        }
        log.info({ user: user.name, from }, "dashboard: logged in");
        res
          .status(303)
          .set("Set-Cookie", signIn.cookies.setCookie(user.name))
          .set("Location", "/campaigns")
          .end();
      }, next);
    },
  );
  router.post(LOGOUT_PATH, (_req, res) => {
    res
      .status(303)
      .set("Set-Cookie", signIn.cookies.clearCookie())
      .set("Location", LOGIN_PATH)
      .end();
  });
  return router;
}

/**
 * The header's right side: who is signed in and a log-out button; nothing when nobody is (the
 * campaign page links to the login form where its actions would be).
 */
export function whoHtml(user: DashboardUser | undefined): string {
  if (!user?.signedIn) return "";
  return `signed in as <strong class="user">${escapeHtml(user.name)}</strong> <form method="post" action="${LOGOUT_PATH}" style="display:inline"><button type="submit">Log out</button></form>`;
}

function sendLoginPage(
  res: Response,
  status: number,
  page: { boardPath: string; named: boolean; error?: string },
): void {
  const nonce = randomBytes(16).toString("base64");
  const refused = page.error ? `<p class="error" role="alert">${escapeHtml(page.error)}</p>` : "";
  const asked = page.named
    ? "This dashboard needs you to sign in with your own token (made by <code>giftjobs dashboard add-user</code>)."
    : "The actions of this dashboard need its token (<code>GIFTJOBS_DASHBOARD_TOKEN</code>).";
  const main = `${refused}
<p>${asked}</p>
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
        nav: `<a href="/campaigns">Campaigns</a> · <a href="${escapeHtml(page.boardPath)}">Queues</a>`,
        main,
      }),
    );
}
