import { currentActor } from "./actor.js";
import type { AuditTrail } from "./trail.js";

/**
 * Records a campaign the worker paused by itself (a budget passed, the API key or the account
 * refused, a product gone out of order, the daily limit): once per pause, by the worker that
 * made it, as the OS user or GIFTJOBS_ACTOR it runs as. The reason's type leads it
 * (`budget_exceeded: ...`, jobs/orders/pause-reason.ts).
 */
export async function recordAutoPause(
  trail: AuditTrail,
  campaign: string,
  reason: string,
): Promise<void> {
  const type = /^([a-z_]+):/.exec(reason)?.[1] ?? "other";
  await trail.append({
    actor: currentActor(),
    action: "auto_pause",
    campaign,
    details: { by: "worker", reason_type: type, reason },
    result: "ok",
  });
}
