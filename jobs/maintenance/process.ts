import type { Job } from "bullmq";
import {
  type ForgetDeps,
  type ForgetSummary,
  forgetEndedBefore,
} from "../../src/campaigns/forget.js";
import { type Logger, silentLogger } from "../../src/log.js";
import type { PaidMemory, PaidPruned } from "../../src/orders/paid-memory.js";
import { plural } from "../../src/plural.js";
import type { ForgetJobData, ForgetJobResult } from "./job.js";

const DAY_MS = 86_400_000;

export interface ForgetJobDeps extends ForgetDeps {
  /**
   * GIFTJOBS_FORGET_AFTER_DAYS: campaigns that ended longer ago than this are forgotten. Unset:
   * a job left from when the setting was on forgets nothing.
   */
  afterDays: number | undefined;
  /** The paid memory to prune (files under the data dir, or PostgreSQL's); none: nothing pruned. */
  paidMemory?: PaidMemory;
  /** GIFTJOBS_REPEAT_WINDOW_DAYS: what was recorded longer ago than this is pruned. */
  repeatWindowDays: number;
  /** @defaultValue silent */
  log?: Logger;
  /** Told of each run's summary: what the audit trail records of a forget. */
  onForgotten?: (summary: ForgetSummary) => void | Promise<void>;
  /** Told of a prune, with the time it pruned before: what the audit trail records of it. */
  onPruned?: (pruned: PaidPruned, before: Date) => void | Promise<void>;
  /** The clock. @defaultValue Date.now */
  now?: () => number;
}

/**
 * The processor of the nightly `forget-ended` job: `orders forget --ended-before` with the date
 * GIFTJOBS_FORGET_AFTER_DAYS ago, when set; then the paid memory pruned of what was recorded
 * before GIFTJOBS_REPEAT_WINDOW_DAYS ago, which no import reads any more
 * (docs/architecture/repeats.md, "How long it is kept"). A campaign that cannot be forgotten yet
 * (failed_uncertain rows) is logged and left for a later night; forgetting and pruning are
 * idempotent, so a job run twice (by two workers' schedulers, or after a failure) does nothing
 * twice.
 */
export function createForgetProcessor(
  deps: ForgetJobDeps,
): (job: Job<ForgetJobData>) => Promise<ForgetJobResult> {
  return async (job) => {
    const log = (deps.log ?? silentLogger).child({ jobId: job.id, queue: job.queueName });
    const now = (deps.now ?? Date.now)();
    const forgotten = await forgetPart(deps, log, now);
    return { ...forgotten, paid_memory: await prunePart(deps, log, now) };
  };
}

async function forgetPart(
  deps: ForgetJobDeps,
  log: Logger,
  now: number,
): Promise<Omit<ForgetJobResult, "paid_memory">> {
  const before = new Date(now - (deps.afterDays ?? 0) * DAY_MS);
  if (deps.afterDays === undefined)
    return { ended_before: before.toISOString(), campaigns: [], rows: 0, skipped: [] };
  const summary = await forgetEndedBefore(deps, before, { dryRun: false });
  await deps.onForgotten?.(summary);
  for (const skip of summary.skipped)
    log.warn({ campaign: skip.campaign }, `not forgotten yet: ${skip.why}`);
  const campaigns = summary.campaigns.map((c) => c.campaign);
  if (campaigns.length > 0)
    log.info({ campaigns, rows: summary.rows }, "campaigns forgotten (GIFTJOBS_FORGET_AFTER_DAYS)");
  return {
    ended_before: before.toISOString(),
    campaigns,
    rows: summary.rows,
    skipped: summary.skipped.map((s) => s.campaign),
  };
}

async function prunePart(
  deps: ForgetJobDeps,
  log: Logger,
  now: number,
): Promise<ForgetJobResult["paid_memory"]> {
  const before = new Date(now - deps.repeatWindowDays * DAY_MS);
  const recorded_before = before.toISOString();
  if (!deps.paidMemory) return { recorded_before, entries: 0, imports: 0 };
  const pruned = await deps.paidMemory.prune(before.getTime());
  if (pruned.entries + pruned.imports > 0) await deps.onPruned?.(pruned, before);
  const { entries, imports } = pruned;
  // Every night, none pruned included: the line says the prune ran.
  log.info(
    { ...pruned, recorded_before },
    `paid memory: pruned ${entries} ${plural(entries, "entry", "entries")} and ${imports} imported ${plural(imports, "file")} recorded before ${recorded_before} (GIFTJOBS_REPEAT_WINDOW_DAYS=${deps.repeatWindowDays})`,
  );
  return { recorded_before, ...pruned };
}
