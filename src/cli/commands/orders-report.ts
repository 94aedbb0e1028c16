import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeCampaignReport } from "../../campaigns/archive.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import { repeatsField, repeatsText } from "../../campaigns/status.js";
import { UserError } from "../../errors/user-error.js";
import { grouped } from "../../grouped.js";
import type { Ledger } from "../../ledger/ledger.js";
import { plural } from "../../plural.js";
import { createContext, printJson } from "../run-action.js";
import { withRedisServices } from "../services.js";

/** `--out -` means stdout, as it does for most tools (docs/commands.md, "Every command and option"). */
const STDOUT = "-";

/** `orders report`: one CSV line per row, to a file or to stdout. */
export async function runReport(opts: {
  campaign: string;
  out?: string;
  json?: boolean;
}): Promise<number> {
  if (opts.out === STDOUT && opts.json)
    throw new UserError("--out - writes the report to stdout: leave out --json");
  const ctx = createContext(opts.json);
  return withRedisServices(ctx.config, async ({ ledger }) => {
    await requireCampaign(ledger, opts.campaign);
    if (opts.out === STDOUT) {
      await reportToStdout(ledger, opts.campaign);
      return 0;
    }
    const out = resolve(
      opts.out ?? join(ctx.config.dataDir, "campaigns", opts.campaign, "report.csv"),
    );
    // An archived campaign's report is the one written when it was archived.
    const rows = await writeCampaignReport(ledger, opts.campaign, out);
    // Its tombstone keeps the meta: an archived campaign says its repeats too.
    const repeats = repeatsField(await ledger.campaigns.meta(opts.campaign));
    if (opts.json) printJson({ campaign: opts.campaign, rows, report: out, ...repeats });
    else
      process.stdout.write(
        `${grouped(rows)} ${plural(rows, "row")} written to ${out}\n` +
          (repeats.repeats
            ? `  ${repeatsText(repeats.repeats)} (paid again knowingly: --allow-repeats; the rows name them in column repeat_of)\n`
            : ""),
      );
    return 0;
  });
}

/**
 * The report a file would hold, written whole to a private temporary folder first (so an
 * archived campaign's is the archived one), then copied to stdout and removed.
 */
async function reportToStdout(ledger: Ledger, campaign: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "giftjobs-report-"));
  try {
    const file = join(dir, "report.csv");
    await writeCampaignReport(ledger, campaign, file);
    for await (const chunk of createReadStream(file)) {
      if (!process.stdout.write(chunk)) await once(process.stdout, "drain");
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
