import type { Redis } from "ioredis";
import type { AuditDetails } from "../audit/entry.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import { requireCampaign } from "./find-campaign.js";
import { type FilesForgotten, forgetCampaignFiles } from "./forget-files.js";
import { endedAt, forgottenAt, notEndedBecause } from "./forget-records.js";
import { forgetInRedis, markForget, markForgotten } from "./forget-redis.js";

/** What a forget needs: Redis (its scripts), the ledger on it, the data dir. */
export interface ForgetDeps {
  redis: Redis;
  ledger: Ledger;
  dataDir: string;
}

/** One campaign of `orders forget --json`. */
export interface CampaignForgotten {
  campaign: string;
  /** `already`: forgotten before (done again: nothing is left to find); `would_forget`: --dry-run. */
  outcome: "forgotten" | "already" | "would_forget";
  forgotten_at: string | null;
  ended_at: string | null;
  /** The campaign's rows (counts.total): all of them are without their people now. */
  rows: number;
  /** Orders rewritten in Redis (0 for an archived campaign: its orders are in its archive). */
  orders: number;
  files: FilesForgotten;
}

/** A campaign `--ended-before` left alone, and why. */
export interface ForgetSkipped {
  campaign: string;
  why: string;
}

/**
 * What `orders forget` did: the campaigns forgotten and their rows. The audit trail records a
 * forget from this summary (docs/architecture/forgetting.md, "The audit trail").
 */
export interface ForgetSummary {
  dry_run: boolean;
  campaigns: CampaignForgotten[];
  /** Rows of the campaigns forgotten (or that would be), all together. */
  rows: number;
  skipped: ForgetSkipped[];
}

/**
 * `orders forget --campaign N` (docs/architecture/forgetting.md): removes e-mail addresses,
 * references and names of an ended campaign from Redis and from its folder of the data dir,
 * keeping counts, money, order and item ids, statuses, the journal and the paid memory. Refuses a
 * campaign with rows queued, in flight, submitted or failed_uncertain, in one line. Forgetting
 * again is harmless.
 */
export async function forgetCampaign(
  deps: ForgetDeps,
  campaign: string,
  options: { dryRun: boolean },
): Promise<ForgetSummary> {
  await requireCampaign(deps.ledger, campaign);
  const forgotten = await forgetOne(deps, campaign, options);
  return summaryOf(options.dryRun, [forgotten], []);
}

async function forgetOne(
  deps: ForgetDeps,
  campaign: string,
  options: { dryRun: boolean },
): Promise<CampaignForgotten> {
  const { redis, ledger, dataDir } = deps;
  const [meta, counts] = await Promise.all([ledger.meta(campaign), ledger.counts(campaign)]);
  const before = forgottenAt(meta);
  const why = notEndedBecause(counts);
  if (why) throw new UserError(notEndedText(campaign, why));
  const result = {
    campaign,
    ended_at: endedAt(meta) ?? null,
    rows: counts.total,
  };
  if (options.dryRun) {
    const files = await forgetCampaignFiles(dataDir, campaign, { dryRun: true, forgottenAt: "" });
    return { ...result, outcome: "would_forget", forgotten_at: before ?? null, orders: 0, files };
  }
  const marked = await markForget(redis, ledger, campaign);
  if (marked !== "marked")
    throw new UserError(notEndedText(campaign, "it changed: rows are pending again"));
  const started = (await ledger.meta(campaign)) as Record<string, string | undefined>;
  const written = await forgetInRedis(redis, ledger, campaign);
  const files = await forgetCampaignFiles(dataDir, campaign, {
    dryRun: false,
    forgottenAt: before ?? started.forget_started_at ?? new Date().toISOString(),
  });
  const at = await markForgotten(redis, ledger, campaign);
  return {
    ...result,
    outcome: before ? "already" : "forgotten",
    forgotten_at: at,
    orders: written.orders,
    files,
  };
}

function notEndedText(campaign: string, why: string): string {
  return `campaign ${campaign} is not ended (${why}): only an ended campaign can be forgotten`;
}

/**
 * `orders forget --ended-before DATE`, and the nightly job: every ended campaign that ended
 * before `before` and is not forgotten yet. A campaign not ended is left alone, and one that
 * ended with failed_uncertain rows is named in `skipped` with why.
 */
export async function forgetEndedBefore(
  deps: ForgetDeps,
  before: Date,
  options: { dryRun: boolean },
): Promise<ForgetSummary> {
  const due = await campaignsEndedBefore(deps.ledger, before);
  const forgotten: CampaignForgotten[] = [];
  for (const campaign of due.ended) forgotten.push(await forgetOne(deps, campaign, options));
  return summaryOf(options.dryRun, forgotten, due.skipped);
}

/**
 * The campaigns not forgotten that ended before `before`: those that can be forgotten, and
 * those that cannot yet (failed_uncertain rows). `doctor` lists both.
 */
export async function campaignsEndedBefore(
  ledger: Ledger,
  before: Date,
): Promise<{ ended: string[]; skipped: ForgetSkipped[] }> {
  const ended: string[] = [];
  const skipped: ForgetSkipped[] = [];
  for (const campaign of await ledger.campaigns()) {
    const [meta, counts] = await Promise.all([ledger.meta(campaign), ledger.counts(campaign)]);
    const end = endedAt(meta);
    if (forgottenAt(meta) || end === undefined || Date.parse(end) >= before.getTime()) continue;
    const counted = counts.queued + counts.in_flight + counts.submitted;
    // Rows added or retried since it ended: it is not ended any more.
    if (counted > 0) continue;
    const why = notEndedBecause(counts);
    if (why) skipped.push({ campaign, why });
    else ended.push(campaign);
  }
  return { ended, skipped };
}

function summaryOf(
  dryRun: boolean,
  campaigns: CampaignForgotten[],
  skipped: ForgetSkipped[],
): ForgetSummary {
  const rows = campaigns.reduce((sum, c) => sum + c.rows, 0);
  return { dry_run: dryRun, campaigns, rows, skipped };
}

/** What the audit trail keeps of a forget: which campaigns, how many rows; no person. */
export function forgetDetails(summary: ForgetSummary): AuditDetails {
  return {
    campaigns: summary.campaigns.map((c) => c.campaign),
    rows: summary.rows,
    left_alone: summary.skipped.map((s) => s.campaign),
  };
}
