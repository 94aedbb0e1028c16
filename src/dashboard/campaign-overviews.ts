import { type CampaignSummary, listCampaigns } from "../campaigns/summary.js";
import type { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CampaignProgress, RateMeter } from "./campaign-progress.js";

/** A campaign as the campaigns page and `campaigns.json` show it. */
export interface CampaignOverview extends CampaignSummary {
  progress: CampaignProgress;
}

/** Running campaigns first, then those waiting on an operator, then the finished ones. */
const STATE_ORDER = ["running", "paused", "held", "done", "cancelled", "archived"];

/**
 * Where a campaign is listed: the stalled ones first, then the paused ones (both need an
 * operator now), then by STATE_ORDER.
 */
function rank(c: CampaignSummary): number {
  if (c.stalled) return 0;
  if (c.state === "paused") return 1;
  return 2 + STATE_ORDER.indexOf(c.state);
}

/** Every campaign with its progress, stalled and paused first (oldest first within a rank). */
export async function campaignOverviews(
  ledger: Ledger,
  meter: RateMeter,
  workers?: WorkerBeats,
): Promise<CampaignOverview[]> {
  const summaries = await listCampaigns(ledger, workers);
  meter.keepOnly(summaries.map((s) => s.campaign));
  const now = Date.now();
  const overviews = summaries.map((s) => ({ ...s, progress: meter.observe(s, now) }));
  return overviews.sort((a, b) => rank(a) - rank(b));
}
