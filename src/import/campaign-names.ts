import { closeNames, didYouMean } from "../errors/did-you-mean.js";
import { UserError } from "../errors/user-error.js";

/**
 * A name as people tell names apart: case, spaces, '-' and '_' dropped. `Q4-gifts`, `q4_gifts`
 * and `q4gifts` are one name to a person; `2026-01` and `2026-02` stay two.
 */
function nameKey(name: string): string {
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
    const close = closeNames(campaign, known);
    const meant = close.length > 0 ? ` (${didYouMean(close).replace(/^; /, "")})` : "";
    throw new UserError(
      `campaign ${campaign} does not exist${meant}: --append adds to an existing campaign; drop --append to start a new one`,
    );
  }
  const alike = known.filter((name) => nameKey(name) === nameKey(campaign));
  if (alike.length > 0) {
    throw new UserError(
      `campaign ${campaign} does not exist, and ${alike.map((n) => `"${n}"`).join(", ")} differs from it only in case, spaces, '-' or '_'${didYouMean(alike.slice(0, 3))} (add to it with --campaign ${alike[0]} --append); a new campaign needs a name that differs otherwise`,
    );
  }
}
