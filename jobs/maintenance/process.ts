import type { Job } from "bullmq";
import {
  type ForgetDeps,
  type ForgetSummary,
  forgetEndedBefore,
} from "../../src/campaigns/forget.js";
import { type Logger, silentLogger } from "../../src/log.js";
import type { ForgetJobData, ForgetJobResult } from "./job.js";

const DAY_MS = 86_400_000;

export interface ForgetJobDeps extends ForgetDeps {
  /**
   * GIFTJOBS_FORGET_AFTER_DAYS: campaigns that ended longer ago than this are forgotten. Unset:
   * a job left from when the setting was on forgets nothing.
   */
  afterDays: number | undefined;
  /** @defaultValue silent */
  log?: Logger;
  /** Told of each run's summary: what the audit trail records of a forget. */
  onForgotten?: (summary: ForgetSummary) => void | Promise<void>;
  /** The clock. @defaultValue Date.now */
  now?: () => number;
}

/**
 * The processor of the nightly `forget-ended` job: `orders forget --ended-before` with the date
 * GIFTJOBS_FORGET_AFTER_DAYS ago. A campaign that cannot be forgotten yet (failed_uncertain rows)
 * is logged and left for a later night; forgetting is idempotent, so a job run twice (by two
 * workers' schedulers, or after a failure) forgets nothing twice.
 */
export function createForgetProcessor(
  deps: ForgetJobDeps,
): (job: Job<ForgetJobData>) => Promise<ForgetJobResult> {
  return async (job) => {
    const log = (deps.log ?? silentLogger).child({ jobId: job.id, queue: job.queueName });
    const before = new Date((deps.now ?? Date.now)() - (deps.afterDays ?? 0) * DAY_MS);
    if (deps.afterDays === undefined)
      return { ended_before: before.toISOString(), campaigns: [], rows: 0, skipped: [] };
    const summary = await forgetEndedBefore(deps, before, { dryRun: false });
    await deps.onForgotten?.(summary);
    for (const skip of summary.skipped)
      log.warn({ campaign: skip.campaign }, `not forgotten yet: ${skip.why}`);
    const campaigns = summary.campaigns.map((c) => c.campaign);
    if (campaigns.length > 0)
      log.info(
        { campaigns, rows: summary.rows },
        "campaigns forgotten (GIFTJOBS_FORGET_AFTER_DAYS)",
      );
    return {
      ended_before: before.toISOString(),
      campaigns,
      rows: summary.rows,
      skipped: summary.skipped.map((s) => s.campaign),
    };
  };
}
