import { type CampaignStatus, campaignStatus } from "../orders/campaign-status.js";
import type { Ledger } from "../orders/ledger.js";

/** Every campaign's status counts, in name order. */
export async function campaignStatuses(ledger: Ledger): Promise<CampaignStatus[]> {
  const names = await ledger.campaigns();
  return Promise.all(names.map((name) => campaignStatus(ledger, name)));
}
