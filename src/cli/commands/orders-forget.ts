import {
  type CampaignForgotten,
  type ForgetSummary,
  forgetCampaign,
  forgetDetails,
  forgetEndedBefore,
} from "../../campaigns/forget.js";
import { UserError } from "../../errors/user-error.js";
import { grouped } from "../../grouped.js";
import { plural } from "../../plural.js";
import { commandClient } from "../../redis/connection.js";
import { auditedCommand } from "../audit-trail.js";
import { askYesNo, type PromptStreams } from "../confirm-import.js";
import { createContext, printJson } from "../run-action.js";
import { withRedisServices } from "../services.js";

interface ForgetFlags {
  campaign?: string;
  endedBefore?: string;
  dryRun?: boolean;
  /** Forget without asking (scripts); without it a terminal must confirm. */
  yes?: boolean;
  json?: boolean;
}

/** Where the question is asked; a test gives its own streams. */
export interface ForgetPrompt {
  streams?: PromptStreams;
}

/**
 * `orders forget`: one ended campaign (--campaign) or every one that ended before a date
 * (--ended-before). Returns the summary with the exit code: the summary is what the audit
 * trail records of a forget (docs/architecture/forgetting.md, "The audit trail").
 */
export async function runForget(opts: ForgetFlags): Promise<number> {
  return (await forgetCommand(opts)).code;
}

/** `orders forget`, with what it did. */
export async function forgetCommand(
  opts: ForgetFlags,
  prompt: ForgetPrompt = {},
): Promise<{ code: number; summary: ForgetSummary }> {
  const before = endedBefore(opts);
  const streams = prompt.streams ?? { input: process.stdin, output: process.stderr };
  const asking = !opts.dryRun && !opts.yes;
  if (asking && !(streams.input.isTTY && streams.output.isTTY))
    throw new UserError(
      "orders forget removes people's e-mails, references and names for good, and there is no terminal to ask: pass --yes to forget, or --dry-run to see what it would remove",
    );
  const ctx = createContext(opts.json);
  const forget = (dryRun: boolean) =>
    withRedisServices(ctx.config, async ({ redis, ledger }) => {
      const deps = { redis: commandClient(redis), ledger, dataDir: ctx.config.dataDir };
      return before
        ? await forgetEndedBefore(deps, before, { dryRun })
        : await forgetCampaign(deps, opts.campaign!, { dryRun });
    });
  if (asking) {
    const plan = await forget(true);
    if (!(await confirmForget(plan, streams))) {
      streams.output.write("nothing was forgotten\n");
      return { code: 1, summary: plan };
    }
  }
  // A dry run changes nothing, so the trail has nothing to record of it.
  const summary = opts.dryRun
    ? await forget(true)
    : await auditedCommand(ctx.config, {
        action: "forget",
        campaign: opts.campaign ?? null,
        details: before ? { ended_before: before.toISOString() } : {},
        run: () => forget(false),
        done: forgetDetails,
      });
  if (opts.json) printJson(summary);
  else process.stdout.write(forgetText(summary));
  return { code: 0, summary };
}

/**
 * Shows what would be forgotten (the dry run's lines, which already name what is left alone)
 * and asks; true when there is nothing to forget, as there is nothing to lose.
 */
async function confirmForget(plan: ForgetSummary, streams: PromptStreams): Promise<boolean> {
  const going = plan.campaigns.filter((c) => c.outcome === "would_forget");
  if (going.length === 0) return true;
  const rows = going.reduce((sum, c) => sum + c.rows, 0);
  const lines = forgetText(plan)
    .split("\n")
    .filter((l) => !l.startsWith("--dry-run"));
  streams.output.write(lines.join("\n"));
  return askYesNo(
    `\nRemove the e-mails, references and names of ${grouped(rows)} ${plural(rows, "row")} in ${going.length} ${plural(going.length, "campaign")}, for good? [y/N] `,
    streams,
  );
}

/** The date of --ended-before (00:00 UTC of a date, or a date-time with its zone); checks the flags. */
function endedBefore(opts: ForgetFlags): Date | undefined {
  if ((opts.campaign === undefined) === (opts.endedBefore === undefined))
    throw new UserError("orders forget takes --campaign NAME or --ended-before DATE (one of them)");
  if (opts.endedBefore === undefined) return undefined;
  const text = opts.endedBefore;
  const zoned = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
  const at = zoned.test(text) ? new Date(text.length === 10 ? `${text}T00:00Z` : text) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new UserError(
      `--ended-before: ${JSON.stringify(text)} is not a date (2026-01-31, from 00:00 UTC) or a date-time with its zone (2026-01-31T09:00Z)`,
    );
  if (at.getTime() > Date.now()) throw new UserError(`--ended-before: ${text} is in the future`);
  return at;
}

function forgetText(s: ForgetSummary): string {
  const lines = s.campaigns.map(campaignText);
  if (s.campaigns.length === 0) lines.push("no ended campaign to forget");
  for (const skip of s.skipped) lines.push(`campaign ${skip.campaign} left alone: ${skip.why}`);
  if (s.dry_run) lines.push("--dry-run: nothing was changed");
  return `${lines.join("\n")}\n`;
}

function campaignText(c: CampaignForgotten): string {
  const what =
    c.outcome === "would_forget"
      ? `campaign ${c.campaign} would be forgotten`
      : c.outcome === "already"
        ? `campaign ${c.campaign} was forgotten already (${c.forgotten_at}); checked again`
        : `campaign ${c.campaign} forgotten`;
  const files = [
    c.files.rewritten.length ? `${c.files.rewritten.length} files rewritten` : "",
    c.files.removed.length ? `${c.files.removed.length} files removed` : "",
  ].filter(Boolean);
  return `${what}: ${grouped(c.rows)} rows without e-mail, reference or names${files.length ? `; ${files.join(", ")}` : ""}; money, counts, ids and statuses kept`;
}
