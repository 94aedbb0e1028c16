import type { Request } from "express";
import { type Actor, actorOfDashboard } from "../audit/actor.js";
import { SHARED_DASHBOARD_NAME } from "../campaigns/four-eyes.js";

/**
 * Who a dashboard request acts as, for the audit trail and the four-eyes rule: the one place
 * that names the dashboard's user. Until the dashboard signs people in by name, every request
 * with the shared token (GIFTJOBS_DASHBOARD_TOKEN) is `dashboard`, which the four-eyes rule
 * takes for nobody in particular (src/campaigns/four-eyes.ts). `user`: the signed-in user's
 * name, when there is one.
 */
export function dashboardActor(req: Request, user?: string): Actor {
  return actorOfDashboard(user ?? SHARED_DASHBOARD_NAME, req.socket.remoteAddress);
}
