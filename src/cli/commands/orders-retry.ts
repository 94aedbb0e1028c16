import * as z from "zod";
import { apiKeyFingerprint } from "../../api/client.js";
import { firstThenAmend, planFirst } from "../../audit/audited.js";
import type { AuditDetails } from "../../audit/entry.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import {
  checkRetryOptions,
  type RetryOptions,
  type RetryResult,
  retryCampaign,
  retryShortfall,
} from "../../campaigns/retry.js";
import { campaignStatus, repeatsText } from "../../campaigns/status.js";
import { UserError } from "../../errors/user-error.js";
import { grouped } from "../../grouped.js";
import { plural } from "../../plural.js";
import { auditedCommand } from "../audit-trail.js";
import { createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

const flag = z.boolean().optional();

/**
 * `orders retry`'s flags as commander gives them, parsed in one step into the retry's values
 * (RetryOptions, src/campaigns/retry.ts) beside the command's own (--campaign, --json): a new
 * option is a field here and the RetryOptions field it becomes. The old `--force` and a pair
 * of flags that do not go together are refused here, naming the flags.
 */
const RETRY_FLAGS = z
  .object({
    campaign: z.string(),
    newKey: flag,
    includeUncertain: flag,
    anyApiKey: flag,
    /** The old spelling of both flags, refused (refusedForce). */
    force: flag,
    allowRepeats: flag,
    json: flag,
  })
  .transform(({ campaign, json, force, ...retry }) => {
    if (force) throw new UserError(refusedForce(retry.newKey));
    checkRetryOptions(retry);
    return { campaign, json: Boolean(json), retry: retry satisfies RetryOptions };
  });

/** `orders retry`: failed rows queued again (docs/commands.md, "Retry"). */
export async function runRetry(flags: z.input<typeof RETRY_FLAGS>): Promise<number> {
  const { campaign, json, retry } = RETRY_FLAGS.parse(flags);
  const opts = { campaign, json, ...retry };
  const ctx = createContext(opts.json);
  return withServices(ctx.config, async ({ ledger, stores }) => {
    await requireCampaign(ledger, opts.campaign);
    if (opts.newKey && !opts.includeUncertain) {
      const status = await campaignStatus(ledger, opts.campaign);
      if (status.failed_uncertain > 0) {
        process.stderr.write(
          `note: ${status.failed_uncertain} failed_uncertain rows are left alone: an order may exist for them. ` +
            "Retry them with their same key (`orders retry` without --new-key); --new-key --include-uncertain could pay twice.\n",
        );
      }
    }
    if (opts.includeUncertain)
      ctx.log.warn(
        { campaign: opts.campaign },
        "--include-uncertain: failed_uncertain rows get new keys; this could pay twice",
      );
    const result = await auditedCommand(
      ctx.config,
      {
        action: "retry",
        campaign: opts.campaign,
        // The mode asked for: a retry with --new-key --include-uncertain may pay twice.
        details: {
          asked: askedMode(opts),
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
                ...retry,
                stores,
                apiKey: apiKeyFingerprint(ctx.config.apiKey),
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
        `note: ${grouped(result.repeats)} ${plural(result.repeats, "order keeps its", "orders keep their")} rows: another campaign has paid the same people the same cards since (--allow-repeats to send them all the same)\n`,
      );
    if (result.repeated)
      process.stderr.write(
        `note: rows paid again knowingly (--allow-repeats), ${repeatsText(result.repeated)}; the report names the rows each repeats (repeat_of)\n`,
      );
    if (result.unclear > 0)
      process.stderr.write(
        `note: ${grouped(result.unclear)} ${plural(result.unclear, "order keeps its", "orders keep their")} key: an attempt under it ended unclear, so an order may exist. ` +
          "Retry them with their same key; --new-key --include-uncertain only once you have checked the service's orders.\n",
      );
    if (opts.json) printJson({ campaign: opts.campaign, ...result });
    else
      process.stdout.write(
        `${grouped(result.rows)} ${plural(result.rows, "row")} in ${grouped(result.orders)} ${plural(result.orders, "order")} re-queued (${result.mode})\n`,
      );
    return 0;
  });
}

/**
 * `--force` meant two things, by --new-key: now two flags, each saying what it does
 * (docs/commands.md, "Retry").
 */
function refusedForce(newKey: boolean | undefined): string {
  return newKey
    ? "--force is now --include-uncertain: with --new-key, also retry failed_uncertain rows under new keys (an order may exist for them: this could pay twice)"
    : "--force is now --any-api-key: retry failed_uncertain rows under their same keys even when their unclear attempt was made with another API key";
}

/** The mode asked for, as the audit entry names it. */
function askedMode(opts: { newKey?: boolean; includeUncertain?: boolean; anyApiKey?: boolean }) {
  if (opts.newKey) return opts.includeUncertain ? "--new-key --include-uncertain" : "--new-key";
  return opts.anyApiKey ? "same key --any-api-key" : "same key";
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
