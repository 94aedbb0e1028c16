import { closeNames, didYouMean } from "../errors/did-you-mean.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";

/**
 * The one lookup of every command that takes `--campaign` (docs/commands.md, "Campaign
 * names"): a name that is not a campaign is a user mistake, said with the campaigns it may
 * have meant (case aside, or a typo away).
 */
export async function requireCampaign(ledger: Ledger, campaign: string): Promise<void> {
  if (await ledger.campaigns.exists(campaign)) return;
  throw new UserError(noCampaignMessage(campaign, await ledger.campaigns.names()));
}

/**
 * `no campaign named "Q4"; did you mean "q4"? (orders list shows them all)`, or, with no
 * campaign at all, where one comes from.
 */
function noCampaignMessage(campaign: string, known: string[]): string {
  if (known.length === 0)
    return `no campaign named "${campaign}": there are no campaigns yet (orders import makes one)`;
  return `no campaign named "${campaign}"${didYouMean(closeNames(campaign, known))} (orders list shows them all)`;
}
