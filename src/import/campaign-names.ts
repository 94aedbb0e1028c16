import { closeNames, didYouMean } from "../errors/did-you-mean.js";
import { UserError } from "../errors/user-error.js";

/**
 * A name as people tell names apart: case, spaces, '-' and '_' dropped. `Q4-gifts`, `q4_gifts`
 * and `q4gifts` are one name to a person; `2026-01` and `2026-02` stay two.
 */
export function nameKey(name: string): string {
  return name.toLowerCase().replace(/[\s_-]/g, "");
}

/**
 * The checks of a campaign name before a file is read (docs/architecture/repeats.md, "Names"):
 * --append names a campaign that exists (in Redis, or in the journal and paid memory of a lost
 * ledger), and a new name is not an existing one spelt otherwise. `known`: every campaign known.
 */
export function checkCampaignName(
  campaign: string,
  append: boolean,
  known: readonly string[],
): void {
  if (known.includes(campaign)) return;
  if (append) {
    throw new UserError(
      `campaign ${campaign} does not exist, so --append has nothing to add to${didYouMean(closeNames(campaign, known))}; drop --append to start a new campaign`,
    );
  }
  const alike = known.filter((name) => nameKey(name) === nameKey(campaign));
  if (alike.length > 0) {
    throw new UserError(
      `campaign ${campaign} would be a new campaign beside ${alike.map((n) => `"${n}"`).join(", ")}, which differs only in case, spaces, '-' or '_'${didYouMean(alike.slice(0, 3))} (pass --append to add to it); to start a new campaign, choose a name that differs otherwise`,
    );
  }
}
