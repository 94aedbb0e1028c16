import type { LimitReached } from "../../src/ledger/daily-limit.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { Logger } from "../../src/log.js";

/**
 * The worker's automatic pause at the daily limit (docs/architecture/ledger.md, "The daily
 * limit"): START gave back an order whose price would take the day's spend of its currency past
 * GIFTJOBS_DAILY_LIMIT, so every running campaign with orders in that currency is paused with
 * `daily_limit` and what to do. Other workers meeting the limit at the same moment find them
 * paused already: only the campaigns this call paused are reported.
 */
export async function pauseAtDailyLimit(
  campaign: string,
  stop: { reason: string; reached: LimitReached },
  deps: {
    ledger: Ledger;
    log: Logger;
    onCampaignPaused?: (campaign: string, reason: string) => void;
  },
): Promise<string[]> {
  const { currency } = stop.reached;
  const paused = await deps.ledger.dailySpend.pauseCampaigns(campaign, currency, stop.reason);
  for (const name of paused)
    deps.onCampaignPaused?.(
      name,
      `${stop.reason}; then: giftjobs orders resume --campaign ${name}`,
    );
  if (paused.length > 0)
    deps.log.error(
      { currency, campaigns: paused },
      `${paused.length === 1 ? "campaign" : "campaigns"} ${paused.join(", ")} paused: ${stop.reason}; then: giftjobs orders resume --campaign NAME`,
    );
  return paused;
}
