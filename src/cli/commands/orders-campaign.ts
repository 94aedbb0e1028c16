import { requireCampaign } from "../../campaigns/find-campaign.js";
import {
  doneRows,
  doneText,
  formatDuration,
  progressCells,
  rateAndEta,
  rowProgress,
} from "../../campaigns/progress.js";
import type { CampaignStall } from "../../campaigns/stall.js";
import {
  anyFailed,
  type CampaignStatus,
  campaignStatus,
  forgottenText,
  pendingRows,
  repeatsText,
} from "../../campaigns/status.js";
import {
  heldBack,
  pauseTeller,
  waitForCampaign,
  whyFailed,
} from "../../campaigns/wait-for-campaign.js";
import type { WorkerBeats } from "../../campaigns/worker-beats.js";
import type { Config } from "../../config.js";
import { grouped } from "../../grouped.js";
import type { Ledger } from "../../ledger/ledger.js";
import { writeAboveOverlay } from "../../log.js";
import { plural } from "../../plural.js";
import type { RedisConnection } from "../../redis/connection.js";
import { OutageReporter, redisAddress } from "../../redis/outage-reporter.js";
import { progressBar } from "../progress.js";
import { createContext, printJson } from "../run-action.js";
import { withRedisServices } from "../services.js";

/** Cells of the --wait bar. */
const BAR_WIDTH = 30;

/** `orders status`: exit 1 when a --wait ends with failed rows, 124 when it timed out. */
export async function runStatus(opts: {
  campaign: string;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  return withRedisServices(ctx.config, async ({ ledger, redis, workers }) => {
    await requireCampaign(ledger, opts.campaign);
    let status = await campaignStatus(ledger, opts.campaign, workers);
    if (opts.wait) {
      const waited = await waitWithBar(ledger, opts.campaign, {
        timeoutSeconds: opts.timeout,
        interactive: ctx.interactive,
        outage: outageReporterOf(redis, ctx.config),
        workers,
      });
      status = waited.status;
      if (waited.timedOut) {
        // One line on stderr; with --json the status document is still the result.
        if (opts.json) printJson(status);
        process.stderr.write(
          `giftjobs: timed out after ${opts.timeout} s waiting for campaign ${opts.campaign}: ${status.total - pendingRows(status)} of ${status.total} rows done${heldBack(status)}\n`,
        );
        return 124;
      }
    }
    if (!opts.wait || !anyFailed(status)) {
      report(status, opts.json);
      return 0;
    }
    // Exit 1 says why, in one line on stderr (with --json also in the document).
    const why = await whyFailed(ledger, opts.campaign);
    if (opts.json) printJson({ ...status, exit_reason: why.line, failures: why.failures });
    else report(status);
    process.stderr.write(`giftjobs: ${why.line}\n`);
    return 1;
  });
}

function report(status: CampaignStatus, json?: boolean): void {
  if (json) {
    printJson(status);
    return;
  }
  const s = status;
  process.stdout.write(
    `campaign ${s.campaign} (${s.state}): ${doneText(rowProgress(s))}\n` +
      `  queued ${grouped(s.queued)}, in flight ${grouped(s.in_flight)}, submitted ${grouped(s.submitted)}\n` +
      (s.scheduled
        ? `  scheduled ${grouped(s.scheduled)} of the queued rows, the next at ${s.next_send_at}\n`
        : "") +
      `  completed ${grouped(s.completed)}, failed_final ${grouped(s.failed_final)}, failed_uncertain ${grouped(s.failed_uncertain)}, cancelled ${grouped(s.cancelled)}\n` +
      (s.replayed
        ? `  WARNING: ${grouped(s.replayed)} ${plural(s.replayed, "row was", "rows were")} replayed: the service answered with orders made before this campaign was imported\n`
        : "") +
      (s.paused ? `  PAUSED since ${s.paused.since}: ${s.paused.reason}\n` : "") +
      (s.stalled ? `  ${stalledText(s.stalled)}\n` : "") +
      (s.repeats ? `  ${repeatsText(s.repeats)} (paid again knowingly: --allow-repeats)\n` : "") +
      (s.forgotten_at ? `  ${forgottenText(s.forgotten_at)}\n` : ""),
  );
}

/** `STALLED (no_worker): no worker is running: start one with ...`, since when if known. */
function stalledText(stall: CampaignStall): string {
  const since = stall.since ? ` since ${stall.since}` : "";
  return `STALLED (${stall.reason})${since}: ${stall.message}`;
}

/** How long a stall lasts before `--wait` says so: a worker just starting is not one. */
const TELL_STALL_AFTER_MS = 15_000;

/**
 * `--wait` tells of a stall in one line on stderr once it has lasted TELL_STALL_AFTER_MS (again
 * if its reason changes): a wait in a script would otherwise say nothing until its timeout.
 */
function stallTeller(campaign: string): (status: CampaignStatus) => void {
  let seen: { reason: string; at: number; told: boolean } | undefined;
  return (status) => {
    const stall = status.stalled;
    if (!stall) {
      seen = undefined;
      return;
    }
    if (seen?.reason !== stall.reason) seen = { reason: stall.reason, at: Date.now(), told: false };
    if (seen.told || Date.now() - seen.at < TELL_STALL_AFTER_MS) return;
    seen.told = true;
    writeAboveOverlay(`giftjobs: campaign ${campaign} is ${stalledText(stall)}\n`);
  };
}

/** Waits for the campaign with a bar on a terminal. */
async function waitWithBar(
  ledger: Ledger,
  campaign: string,
  options: {
    timeoutSeconds: number | undefined;
    interactive: boolean;
    outage: OutageReporter;
    workers: WorkerBeats;
  },
): Promise<{ status: CampaignStatus; timedOut: boolean }> {
  const { timeoutSeconds, interactive, outage, workers } = options;
  const bar = progressBar(
    interactive,
    // Completed, failed and cancelled apart (progressCells): a cancelled campaign is not a full bar.
    "orders |{cells}| {value}/{total} rows done ({parts}), {rate} rows/s, ETA {eta_text} {paused}",
  );
  // The rate is of the rows done while this command watched, not since the import.
  let first: { at: number; done: number } | undefined;
  const tellStall = stallTeller(campaign);
  const pauseLine = pauseTeller(campaign);
  try {
    return await waitForCampaign(ledger, campaign, {
      timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      outage,
      workers,
      onStatus: (status) => {
        tellStall(status);
        const paused = pauseLine(status);
        if (paused) writeAboveOverlay(paused);
        const done = doneRows(status);
        first ??= { at: Date.now(), done };
        const { rate, etaSeconds } = rateAndEta(
          done - first.done,
          Date.now() - first.at,
          status.total - done,
        );
        bar.setTotal(status.total);
        const progress = rowProgress(status);
        bar.update(done, {
          cells: progressCells(progress, BAR_WIDTH),
          parts: `${grouped(progress.completed)} completed, ${grouped(progress.failed)} failed, ${grouped(progress.cancelled)} cancelled`,
          rate: rate.toFixed(1),
          eta_text: formatDuration(etaSeconds),
          paused: status.paused
            ? "(PAUSED)"
            : status.stalled
              ? `(STALLED: ${status.stalled.reason})`
              : "",
        });
      },
    });
  } finally {
    bar.stop();
    outage.close();
  }
}

/** Redis away while waiting: one line every few seconds, and the wait goes on. */
function outageReporterOf(redis: RedisConnection, config: Config): OutageReporter {
  return new OutageReporter(redisAddress(config)).watch(redis);
}
