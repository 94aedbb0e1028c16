import type { RecordFirst } from "../../audit/audited.js";
import type { AuditAction, AuditDetails } from "../../audit/entry.js";
import {
  approveCampaign,
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
} from "../../campaigns/control.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import { doneText, rowProgress } from "../../campaigns/progress.js";
import { storedState } from "../../campaigns/state.js";
import { forgottenText, repeatsText } from "../../campaigns/status.js";
import {
  type CampaignSummary,
  type CurrencyMoney,
  campaignSummary,
  listCampaigns,
} from "../../campaigns/summary.js";
import { type TodaySpend, todaySpend, todaySpendText } from "../../campaigns/today-spend.js";
import type { WorkerBeats } from "../../campaigns/worker-beats.js";
import type { Config } from "../../config.js";
import { dailyLimitOf, daySpendOf } from "../../daily-limit.js";
import { demoCampaignHint } from "../../demo/demo-prefix.js";
import { grouped } from "../../grouped.js";
import type { Ledger } from "../../ledger/ledger.js";
import { plural } from "../../plural.js";
import { auditedCommand, type WithoutTrail } from "../audit-trail.js";
import { createContext, printJson } from "../run-action.js";
import { withRedisServices } from "../services.js";

/** `orders list`: every campaign in a table (or --json). */
export async function runList(opts: { json?: boolean }): Promise<number> {
  const ctx = createContext(opts.json);
  return withRedisServices(ctx.config, async ({ ledger, redis, workers }) => {
    const all = await listCampaigns(ledger, workers);
    if (opts.json) printJson(all);
    else
      process.stdout.write(
        listText(all) + spendText(await todaySpend(ledger, daySpendOf(ctx.config))),
      );
    // None here: the demo's, if any, are under a prefix of their own; say which.
    if (!opts.json && all.length === 0)
      process.stdout.write(await demoCampaignHint(redis, ctx.config.prefix));
    return 0;
  });
}

/**
 * The entry of a move that lets the campaign spend, written before it (RecordFirst): the
 * campaign as it stands, in the state it is moved to.
 */
function entryBefore(
  ledger: Ledger,
  name: string,
  { workers, first, state, outcome }: MoveEntry,
): () => Promise<void> {
  return async () => {
    const summary = await campaignSummary(ledger, name, workers);
    await first({ outcome, ...summaryDetails(summary), state });
  };
}

interface MoveEntry {
  workers: WorkerBeats;
  first: RecordFirst;
  state: string;
  outcome: string;
}

/** `orders approve`: refused by the four-eyes rule for the campaign's own importer. */
export const runApprove = lifecycle(
  "approve",
  "refuse",
  async (ledger, name, workers, { first }) => {
    const outcome = `campaign ${name} approved`;
    await approveCampaign(ledger, name, {
      beforeMove: entryBefore(ledger, name, { workers, first, state: "running", outcome }),
    });
    return {
      summary: await campaignSummary(ledger, name, workers),
      line: `campaign ${name} approved`,
    };
  },
);

/** `orders pause`. */
export const runPause = lifecycle("pause", "warn", async (ledger, name, workers) => {
  const paused = await pauseCampaign(ledger, name);
  return {
    summary: await campaignSummary(ledger, name, workers),
    line: paused ? `campaign ${name} paused` : `campaign ${name} was already paused`,
  };
});

/** `orders resume`. */
export const runResume = lifecycle("resume", "refuse", async (ledger, name, workers, ctx) => {
  const outcome = `campaign ${name} resumed`;
  const resumed = await resumeCampaign(ledger, name, {
    limit: dailyLimitOf(ctx.config),
    beforeMove: entryBefore(ledger, name, { workers, first: ctx.first, state: "running", outcome }),
  });
  return {
    summary: await campaignSummary(ledger, name, workers),
    line: resumed ? `campaign ${name} resumed` : `campaign ${name} was already running`,
  };
});

/** `orders cancel`. */
export const runCancel = lifecycle("cancel", "warn", async (ledger, name, workers) => {
  // Cancelled before: said so, not its count again (a cancel again still takes off the
  // pending list what a worker may have put back meanwhile).
  const before = storedState(await ledger.campaigns.meta(name));
  const cancelled = await cancelCampaign(ledger, name);
  const summary = await campaignSummary(ledger, name, workers);
  return {
    summary,
    line:
      before === "cancelled"
        ? `campaign ${name} is already cancelled${since(summary.cancelled_at)}`
        : `campaign ${name} cancelled: ${grouped(summary.cancelled)} ${plural(summary.cancelled, "row")} cancelled (${grouped(cancelled)} ${plural(cancelled, "order")} taken off the pending list); no new order will be created`,
  };
});

/** What a campaign command prints: a JSON document with --json, else text. */
export type CampaignStep = (
  ledger: Ledger,
  campaign: string,
  config: Config,
  workers: WorkerBeats,
  /** Writes the entry before the step's effect (src/audit/audited.ts). */
  first: RecordFirst,
) => Promise<{ json: unknown; text: string; audit?: AuditDetails }>;

/** How a campaign command is recorded in the audit trail (src/cli/audit-trail.ts). */
export interface CampaignAudit {
  action: AuditAction;
  without: WithoutTrail;
}

/** `orders NAME --campaign N [--json]` on an existing campaign, recorded in the audit trail. */
export function campaignCommand(
  step: CampaignStep,
  audit: CampaignAudit,
): (opts: { campaign: string; json?: boolean }) => Promise<number> {
  return async (opts) => {
    const ctx = createContext(opts.json);
    const { json, text } = await auditedCommand(
      ctx.config,
      {
        action: audit.action,
        campaign: opts.campaign,
        run: (first) =>
          withRedisServices(ctx.config, async ({ ledger, workers }) => {
            await requireCampaign(ledger, opts.campaign);
            return step(ledger, opts.campaign, ctx.config, workers, first);
          }),
        done: (result) => result.audit ?? {},
      },
      { without: audit.without },
    );
    if (opts.json) printJson(json);
    else process.stdout.write(text);
    return 0;
  };
}

/** What the audit keeps of a campaign as a command left it: state, rows, money per currency. */
export function summaryDetails(summary: CampaignSummary): AuditDetails {
  return {
    state: summary.state,
    rows: summary.total,
    money: Object.fromEntries(
      Object.entries(summary.money).map(([c, m]) => [
        c,
        { price: m.price, spent: m.spent, ...(m.budget ? { budget: m.budget } : {}) },
      ]),
    ),
  };
}

/** A lifecycle step: one line saying what it did, then the campaign as it now stands. */
function lifecycle(
  action: AuditAction,
  without: WithoutTrail,
  step: (
    ledger: Ledger,
    campaign: string,
    workers: WorkerBeats,
    ctx: { config: Config; first: RecordFirst },
  ) => Promise<{ summary: CampaignSummary; line: string }>,
): (opts: { campaign: string; json?: boolean }) => Promise<number> {
  return campaignCommand(
    async (ledger, campaign, config, workers, first) => {
      const { summary, line } = await step(ledger, campaign, workers, { config, first });
      return {
        json: summary,
        text: `${line}\n${summaryText(summary)}`,
        audit: { outcome: line, ...summaryDetails(summary) },
      };
    },
    {
      action,
      without,
    },
  );
}

/** ` (since T)` when known. */
function since(at: string | null): string {
  return at ? ` (since ${at})` : "";
}

function isZero(amount: string): boolean {
  return /^0(?:\.0*)?$/.test(amount);
}

/** What failed_uncertain orders cost: an order may exist for each, so it may be spent too. */
function maybeSpent(m: CurrencyMoney): string {
  if (isZero(m.uncertain)) return "";
  return `, and up to ${m.uncertain} more may be spent (failed_uncertain rows: an order may exist; check before paying them again)`;
}

/** A campaign's money, a line per currency: what was recorded and what completed orders cost. */
export function summaryText(s: CampaignSummary): string {
  const lines = [`  ${s.state}: ${doneText(rowProgress(s))}`];
  for (const [currency, m] of Object.entries(s.money)) {
    const budget = m.budget ? `, budget ${m.budget}` : "";
    lines.push(
      `  ${currency}: ${grouped(m.rows)} ${plural(m.rows, "row")}, face value ${m.face_value}, price ${m.price}, spent ${m.spent}${maybeSpent(m)}${budget}`,
    );
  }
  if (s.stalled) lines.push(`  STALLED (${s.stalled.reason}): ${s.stalled.message}`);
  if (s.repeats) lines.push(`  ${repeatsText(s.repeats)}`);
  return `${lines.join("\n")}\n`;
}

/** Today's spend under the table, when a currency spent or has a limit. */
function spendText(today: TodaySpend): string {
  return today.currencies.length > 0 ? `\n${todaySpendText(today)}\n` : "";
}

function listText(all: CampaignSummary[]): string {
  if (all.length === 0) return "no campaigns\n";
  const head = [
    "CAMPAIGN",
    "STATE",
    "ROWS",
    "QUEUED",
    "SCHEDULED",
    "DONE",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "SPENT",
    "CREATED",
    "REDIS",
    "STALLED",
  ];
  const rows = all.map((s) => [
    s.campaign,
    s.state,
    grouped(s.total),
    grouped(s.queued + s.in_flight + s.submitted),
    s.scheduled
      ? `${grouped(s.scheduled)} from ${s.next_send_at?.slice(0, 16).replace("T", " ")}`
      : "-",
    // DONE: rows at an end, its parts apart (docs/concepts.md, "Done").
    grouped(s.done),
    grouped(s.completed),
    grouped(s.failed_final + s.failed_uncertain),
    grouped(s.cancelled),
    Object.entries(s.money)
      .map(
        ([c, m]) => `${m.spent}${isZero(m.uncertain) ? "" : `(+${m.uncertain}?)`}/${m.price} ${c}`,
      )
      .join(" ") || "-",
    s.created_at?.slice(0, 16).replace("T", " ") ?? "-",
    `${Math.ceil(s.redis_bytes / 1024)} KB`,
    s.stalled?.reason ?? "-",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd()}\n`;
  // The fix of each stall, under the table (its column says only why).
  const stalls = all.flatMap((s) =>
    s.stalled ? [`campaign ${s.campaign} is STALLED: ${s.stalled.message}\n`] : [],
  );
  // Rows paid again knowingly (--allow-repeats), under the table as the stalls are.
  for (const s of all)
    if (s.repeats) stalls.push(`campaign ${s.campaign} ${repeatsText(s.repeats)}\n`);
  for (const s of all)
    if (s.forgotten_at) stalls.push(`campaign ${s.campaign} ${forgottenText(s.forgotten_at)}\n`);
  return line(head) + rows.map(line).join("") + (stalls.length ? `\n${stalls.join("")}` : "");
}
