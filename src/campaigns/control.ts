import { type Actor, currentActor } from "../audit/actor.js";
import type { DailyLimit } from "../daily-limit.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";
import { checkFourEyes, FOUR_EYES_FIELDS } from "./four-eyes.js";
import { checkLimitResume } from "./limit-resume.js";
import {
  type CampaignMoveName,
  campaignState,
  movableFrom,
  moveCampaign,
  storedState,
} from "./state.js";

/**
 * Pauses a running campaign: the dispatcher hands it no more jobs, and the few already in the
 * queue (its window) go back to its pending list when a worker takes them, unsent.
 * Returns false when it was already paused; a campaign that has ended (done: nothing queued,
 * in flight or submitted) is refused, as there is nothing to pause.
 */
export async function pauseCampaign(
  ledger: Ledger,
  campaign: string,
  reason = "paused by operator",
): Promise<boolean> {
  await refuseEnded(ledger, campaign);
  if (await pauseIfRunning(ledger, campaign, reason)) return true;
  const state = storedState(await ledger.campaigns.meta(campaign));
  if (state === "paused") return false;
  throw notIn(campaign, state, "paused", "pause");
}

/**
 * Called once every check has passed and before the move that lets the campaign spend: its
 * audit entry is written here (docs/architecture/audit.md, "An entry before its effect").
 */
export type BeforeMove = () => Promise<void>;

/**
 * Resumes a paused campaign: the dispatcher sends its pending orders again. With `limit` (the
 * daily limit as this process reads it), a campaign the daily limit paused today under a limit
 * no higher is refused (checkLimitResume).
 */
export async function resumeCampaign(
  ledger: Ledger,
  campaign: string,
  { limit, beforeMove }: { limit?: DailyLimit; beforeMove?: BeforeMove } = {},
): Promise<boolean> {
  const meta = await ledger.campaigns.meta(campaign);
  if (limit) checkLimitResume(campaign, meta.paused_reason, limit);
  const before = storedState(meta);
  if (before === "running") return false;
  if (before !== "paused") throw notIn(campaign, before, "resumed", "resume");
  await beforeMove?.();
  if ((await moveCampaign(ledger, campaign, "resume")).changed) return true;
  const state = storedState(await ledger.campaigns.meta(campaign));
  if (state === "running") return false;
  throw notIn(campaign, state, "resumed", "resume");
}

/**
 * Approves a held campaign: it runs from now on. `approver` is checked against the four-eyes
 * rule (src/campaigns/four-eyes.ts) and recorded on the campaign; the list of its importers
 * starts again.
 */
export async function approveCampaign(
  ledger: Ledger,
  campaign: string,
  { approver = currentActor(), beforeMove }: { approver?: Actor; beforeMove?: BeforeMove } = {},
): Promise<void> {
  const meta = await ledger.campaigns.meta(campaign);
  const state = storedState(meta);
  if (state !== "held") throw notIn(campaign, state, "approved", "approve");
  checkFourEyes(campaign, meta, approver);
  await beforeMove?.();
  const result = await moveCampaign(ledger, campaign, "approve", {
    [FOUR_EYES_FIELDS.approver]: approver.name,
  });
  if (!result.changed) throw notIn(campaign, result.previous, "approved", "approve");
  await ledger.campaigns.clearMeta(campaign, FOUR_EYES_FIELDS.importers);
}

/**
 * Cancels a campaign for good: no order of it is created after this returns (one being sent
 * at this moment may still complete). Rows not yet sent become `cancelled`; a row whose last
 * attempt ended ambiguously becomes failed_uncertain (an order may exist); orders already
 * accepted are still followed to their end. Returns the orders cancelled from the pending list.
 */
export async function cancelCampaign(ledger: Ledger, campaign: string): Promise<number> {
  const result = await moveCampaign(ledger, campaign, "cancel");
  if (!result.changed && result.previous !== "cancelled")
    throw notIn(campaign, result.previous, "cancelled", "cancel");
  return ledger.dispatch.cancelPending(campaign);
}

/**
 * Pauses a running campaign (an operator, or a worker after a systemic refusal); false when it
 * was not running.
 */
export async function pauseIfRunning(
  ledger: Ledger,
  campaign: string,
  reason: string,
): Promise<boolean> {
  return (await moveCampaign(ledger, campaign, "pause", { paused_reason: reason })).changed;
}

async function refuseEnded(ledger: Ledger, campaign: string): Promise<void> {
  const [meta, counts] = await Promise.all([
    ledger.campaigns.meta(campaign),
    ledger.campaigns.counts(campaign),
  ]);
  if (campaignState(meta, counts) === "done")
    throw new UserError(
      `campaign ${campaign} has ended: all ${counts.total} rows are done, nothing is left to pause`,
    );
}

function notIn(campaign: string, state: StoredState, done: string, move: CampaignMoveName) {
  return new UserError(
    `campaign ${campaign} is ${state}: only a ${movableFrom(move)} campaign can be ${done}`,
  );
}
