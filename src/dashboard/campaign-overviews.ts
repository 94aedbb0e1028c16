import { fourEyesHold } from "../campaigns/four-eyes.js";
import { type CampaignSummary, listCampaigns } from "../campaigns/summary.js";
import type { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CampaignProgress, RateMeter } from "./campaign-progress.js";

/** A campaign as the campaigns page and `campaigns.json` show it. */
export interface CampaignOverview extends CampaignSummary {
  progress: CampaignProgress;
  /** A held campaign of the four-eyes rule: the rule and who imported it (who may not approve). */
  four_eyes?: { rule: string; importers: string[] };
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
  const overviews = await Promise.all(
    summaries.map(async (s) => ({
      ...s,
      progress: meter.observe(s, now),
      ...(s.state === "held" ? await heldBy(ledger, s.campaign) : {}),
    })),
  );
  return overviews.sort((a, b) => rank(a) - rank(b));
}

/**
 * The four-eyes rule of a held campaign, if it has one: its meta read again, for held campaigns
 * only (few, and waiting on a person), so the list says who may approve each.
 */
async function heldBy(
  ledger: Ledger,
  campaign: string,
): Promise<Pick<CampaignOverview, "four_eyes">> {
  const hold = fourEyesHold(await ledger.campaigns.meta(campaign));
  return hold ? { four_eyes: hold } : {};
}
