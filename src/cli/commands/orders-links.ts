import { resolve } from "node:path";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import { writePayoutLinks } from "../../campaigns/payout-links.js";
import { grouped } from "../../grouped.js";
import { createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

/** `orders links`: the payout links the ledger kept, to a new private file. */
export async function runLinks(opts: {
  campaign: string;
  out: string;
  all?: boolean;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  const out = resolve(opts.out);
  return withServices(ctx.config, async ({ ledger }) => {
    await requireCampaign(ledger, opts.campaign);
    const result = await writePayoutLinks(ledger, opts.campaign, out, { all: opts.all });
    if (opts.json) printJson(result);
    else process.stdout.write(`${grouped(result.rows)} payout links written to ${out}\n`);
    if (result.without_url > 0)
      process.stderr.write(
        `${grouped(result.without_url)} completed rows have no link kept ` +
          "(workers without --store-payout-urls)\n",
      );
    return 0;
  });
}
