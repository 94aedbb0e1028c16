import { join, resolve } from "node:path";
import { writeCampaignReport } from "../../campaigns/archive.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import { createContext, printJson } from "../run-action.js";
import { withRedisServices } from "../services.js";

const number = (n: number) => n.toLocaleString("en-US");

/** `orders report`: one CSV line per row. */
export async function runReport(opts: {
  campaign: string;
  out?: string;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  const out = resolve(
    opts.out ?? join(ctx.config.dataDir, "campaigns", opts.campaign, "report.csv"),
  );
  return withRedisServices(ctx.config, async ({ ledger }) => {
    await requireCampaign(ledger, opts.campaign);
    // An archived campaign's report is the one written when it was archived.
    const rows = await writeCampaignReport(ledger, opts.campaign, out);
    if (opts.json) printJson({ campaign: opts.campaign, rows, report: out });
    else process.stdout.write(`${number(rows)} rows written to ${out}\n`);
    return 0;
  });
}
