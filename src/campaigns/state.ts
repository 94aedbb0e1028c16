import type { CampaignCounts, CampaignMeta, StoredState } from "../ledger/types.js";

/**
 * The state an operator sees (docs/architecture.md, "Campaign states"): the stored state,
 * except that a held, running or paused campaign with nothing queued, in flight or submitted
 * is `done`. A cancelled campaign stays cancelled; an archived one archived.
 */
export type CampaignState = StoredState | "done";

export function storedState(meta: CampaignMeta): StoredState {
  return meta.state ?? "running";
}

export function campaignState(meta: CampaignMeta, counts: CampaignCounts): CampaignState {
  const stored = storedState(meta);
  if (stored === "cancelled" || stored === "archived") return stored;
  const pending = counts.queued + counts.in_flight + counts.submitted;
  if (pending === 0 && counts.total > 0) return "done";
  return stored;
}
