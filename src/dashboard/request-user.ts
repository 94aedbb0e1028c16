import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type Actor, actorOfDashboard } from "../audit/actor.js";
import { type DashboardUser, OPEN_USER, type Role } from "./dashboard-user.js";

// The one place a handler learns who sent its request (docs/architecture/operators.md,
// "Dashboard users"): sign-in.ts, or openDashboard without sign-in, attaches the user before
// any route; handlers read it back with userOf and actorOfRequest.
const USER = "giftjobsUser";

export function attachUser(res: Response, user: DashboardUser | undefined): void {
  res.locals[USER] = user;
}

/** The user of this request; undefined when nobody signed in on a dashboard that has sign-in. */
export function userOf(res: Response): DashboardUser | undefined {
  return res.locals[USER] as DashboardUser | undefined;
}

/**
 * The actor of an action, for the four-eyes rule and the audit trail: the signed-in user, from
 * the client's address. Behind a reverse proxy that address is the proxy's: the dashboard does
 * not trust X-Forwarded-For, which any client can send.
 */
export function actorOfRequest(req: Request, res: Response): Actor {
  return actorOfDashboard(userOf(res) ?? OPEN_USER, req.socket.remoteAddress);
}

/** Every request is the open user's: a loopback dashboard with neither token nor users file. */
export function openDashboard(): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    attachUser(res, OPEN_USER);
    next();
  };
}

/** Whether the request's user has `role`; every user has `view`. */
export function mayDo(user: DashboardUser | undefined, role: Role): boolean {
  return user !== undefined && (role === "view" || user.roles.has(role));
}

/** The one line of a refusal for want of a role. */
export function roleRefusal(user: DashboardUser, role: Role, what: string): string {
  return `${user.name} may not ${what}: that needs the ${role} role (the dashboard's users file gives roles)`;
}
