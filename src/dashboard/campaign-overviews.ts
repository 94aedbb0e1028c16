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

/** Every campaign with its progress, running ones first (oldest first within a state). */
export async function campaignOverviews(
  ledger: Ledger,
  meter: RateMeter,
  workers?: WorkerBeats,
): Promise<CampaignOverview[]> {
  const summaries = await listCampaigns(ledger, workers);
  meter.keepOnly(summaries.map((s) => s.campaign));
  const now = Date.now();
  const overviews = summaries.map((s) => ({ ...s, progress: meter.observe(s, now) }));
  return overviews.sort((a, b) => STATE_ORDER.indexOf(a.state) - STATE_ORDER.indexOf(b.state));
}
