import { resolve } from "node:path";
import type { Command } from "commander";
import { writePayoutLinks } from "../../campaigns/payout-links.js";
import { action, createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";
import { requireCampaign } from "./campaigns.js";

const number = (n: number) => n.toLocaleString("en-US");

/** Registers `orders links`: the payout links the ledger kept, to a new private file. */
export function registerLinks(orders: Command): void {
  orders
    .command("links")
    .description(
      "Write the payout links of a campaign's completed link rows to a new file (0600), " +
        "to hand out.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .requiredOption("--out <file>", "the file to create (never overwritten)")
    .option("--all", "every completed row's link, not only link rows' (e.g. to send one again)")
    .option("--json", "print one JSON document")
    .action(
      action(async (opts: { campaign: string; out: string; all?: boolean; json?: boolean }) => {
        const ctx = createContext(opts.json);
        const out = resolve(opts.out);
        return withServices(ctx.config, async ({ ledger }) => {
          await requireCampaign(ledger, opts.campaign);
          const result = await writePayoutLinks(ledger, opts.campaign, out, { all: opts.all });
          if (opts.json) printJson(result);
          else process.stdout.write(`${number(result.rows)} payout links written to ${out}\n`);
          if (result.without_url > 0)
            process.stderr.write(
              `${number(result.without_url)} completed rows have no link kept ` +
                "(workers without --store-payout-urls)\n",
            );
          return 0;
        });
      }),
    );
}
