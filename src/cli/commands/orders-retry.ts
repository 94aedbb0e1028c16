import { apiKeyFingerprint } from "../../api/client.js";
import { firstThenAmend, planFirst } from "../../audit/audited.js";
import type { AuditDetails } from "../../audit/entry.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import { type RetryResult, retryCampaign, retryShortfall } from "../../campaigns/retry.js";
import { campaignStatus, repeatsText } from "../../campaigns/status.js";
import { plural } from "../../plural.js";
import { auditedCommand } from "../audit-trail.js";
import { createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

const number = (n: number) => n.toLocaleString("en-US");

/** `orders retry`: failed rows queued again (docs/commands.md, "Retry"). */
export async function runRetry(opts: {
  campaign: string;
  newKey?: boolean;
  force?: boolean;
  allowRepeats?: boolean;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  return withServices(ctx.config, async ({ ledger, stores }) => {
    await requireCampaign(ledger, opts.campaign);
    if (opts.newKey && !opts.force) {
      const status = await campaignStatus(ledger, opts.campaign);
      if (status.failed_uncertain > 0) {
        process.stderr.write(
          `note: ${status.failed_uncertain} failed_uncertain rows are left alone: an order may exist for them. ` +
            "Retry them with their same key (`orders retry` without --new-key); --new-key --force could pay twice.\n",
        );
      }
    }
    if (opts.force && opts.newKey)
      ctx.log.warn(
        { campaign: opts.campaign },
        "--force: failed_uncertain rows get new keys; this could pay twice",
      );
    const result = await auditedCommand(
      ctx.config,
      {
        action: "retry",
        campaign: opts.campaign,
        // The mode asked for: a retry with --new-key --force may pay twice.
        details: {
          asked: opts.newKey ? (opts.force ? "--new-key --force" : "--new-key") : "same key",
          ...(opts.allowRepeats ? { allow_repeats: true } : {}),
        },
        // The entry written with the plan, before the first change; a second one, refused,
        // when the ledger then refuses some of the moves (docs/architecture/audit.md, "An entry
        // before its effect").
        run: (first) =>
          planFirst(
            firstThenAmend((plan) => first(retryDetails(plan)), retryShortfall, retryDetails),
            (beforeMove) =>
              retryCampaign(ledger, opts.campaign, {
                newKey: opts.newKey,
                force: opts.force,
                stores,
                apiKey: apiKeyFingerprint(ctx.config.apiKey),
                allowRepeats: opts.allowRepeats,
                repeatWindowDays: ctx.config.repeatWindowDays,
                beforeMove,
              }),
          ),
        done: retryDetails,
      },
      { stores },
    );
    if (result.repeats)
      process.stderr.write(
        `note: ${number(result.repeats)} ${plural(result.repeats, "order keeps its", "orders keep their")} rows: another campaign has paid the same people the same cards since (--allow-repeats to send them all the same)\n`,
      );
    if (result.repeated)
      process.stderr.write(
        `note: rows paid again knowingly (--allow-repeats), ${repeatsText(result.repeated)}; the report names the rows each repeats (repeat_of)\n`,
      );
    if (result.unclear > 0)
      process.stderr.write(
        `note: ${number(result.unclear)} ${plural(result.unclear, "order keeps its", "orders keep their")} key: an attempt under it ended unclear, so an order may exist. ` +
          "Retry them with their same key; --new-key --force only once you have checked the service's orders.\n",
      );
    if (opts.json) printJson({ campaign: opts.campaign, ...result });
    else
      process.stdout.write(
        `${number(result.rows)} ${plural(result.rows, "row")} in ${number(result.orders)} ${plural(result.orders, "order")} re-queued (${result.mode})\n`,
      );
    return 0;
  });
}

/** What the audit keeps of a retry: its mode and counts. */
function retryDetails(r: RetryResult): AuditDetails {
  return {
    mode: r.mode,
    rows: r.rows,
    orders: r.orders,
    unclear: r.unclear,
    ...(r.repeats ? { repeats: r.repeats } : {}),
    ...(r.repeated ? { repeated: r.repeated } : {}),
  };
}
