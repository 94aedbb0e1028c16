import { doneRows, formatDuration, rateAndEta } from "../campaigns/progress.js";
import { STALL_FIELDS } from "../campaigns/stall.js";
import { type CampaignStatus, campaignStatus, pendingRows } from "../campaigns/status.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";

export interface CampaignTrackerOptions {
  ledger: Ledger;
  log: Logger;
  /** How often the ledger counts of the tracked campaigns are read. @defaultValue 2000 */
  tickMs?: number;
  /** A progress line at most this often, while rows get done. @defaultValue 10000 */
  intervalMs?: number;
  /** A progress line also comes when this share of the rows got done since the last one. @defaultValue 0.05 */
  stepShare?: number;
}

/** What the tracker knows of one campaign this process sent orders of. */
interface Tracked {
  startedAt: number;
  /** Rows done (completed, failed, cancelled) when this process first saw the campaign. */
  doneAtStart: number;
  lastLineAt: number;
  lastLineDone: number;
  /** The pause reason already told, so a pause is one line. */
  pausedReason: string | null;
  /** When the service last answered an order of it here (ServiceWatch). */
  answeredAt?: number;
  /** When this tracker first saw the campaign marked stalled by a worker (service_unreachable). */
  markSeenAt?: number;
}

/**
 * The operator's view of a worker on its terminal: one `info` line per campaign event, not per
 * order. A campaign is tracked from the first order of it this process starts; every `tickMs`
 * the tracker reads its counts from the ledger (all workers' work, not this process's only) and
 * logs progress every ~10 s or 5% (done/total, rate, ETA, failures), a pause and its reason once,
 * a resume, and the end with its totals, after which the campaign is no longer tracked.
 */
export class CampaignTracker {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly options: CampaignTrackerOptions) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.ticking ??= this.tick().finally(() => {
        this.ticking = undefined;
      });
    }, this.options.tickMs ?? 2000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** This process is about to send an order of `campaign`: the first one logs "started". */
  touch(campaign: string): void {
    if (this.tracked.has(campaign)) return;
    const now = Date.now();
    const entry: Tracked = {
      startedAt: now,
      doneAtStart: 0,
      lastLineAt: now,
      lastLineDone: 0,
      pausedReason: null,
    };
    this.tracked.set(campaign, entry);
    void campaignStatus(this.options.ledger, campaign).then(
      (status) => {
        entry.doneAtStart = doneRows(status);
        entry.lastLineDone = entry.doneAtStart;
        this.options.log.info(
          { campaign, total: status.total, done: entry.doneAtStart },
          `campaign ${campaign}: started sending (${entry.doneAtStart} of ${status.total} rows done)`,
        );
      },
      () => this.options.log.info({ campaign }, `campaign ${campaign}: started sending`),
    );
  }

  /**
   * The service answered a request about `campaign` here. A worker's stalled mark seen before
   * is then old news, whoever set it (a worker with another URL, one killed while it could not
   * reach the service): the next tick removes it.
   */
  answered(campaign: string): void {
    const entry = this.tracked.get(campaign);
    if (entry) entry.answeredAt = Date.now();
  }

  /** This process paused the campaign and said why (an error line): no second line for it. */
  pausedHere(campaign: string, reason: string): void {
    const entry = this.tracked.get(campaign);
    if (entry) entry.pausedReason = reason;
  }

  /** One look at every tracked campaign. Public for tests. */
  async tick(): Promise<void> {
    for (const [campaign, entry] of this.tracked) {
      let status: CampaignStatus;
      try {
        status = await campaignStatus(this.options.ledger, campaign);
      } catch {
        continue; // Redis trouble: the next tick looks again.
      }
      this.report(campaign, entry, status);
      this.clearOldMark(campaign, entry, status);
    }
  }

  /**
   * Removes a worker's stalled mark once this process had an answer for the campaign after it
   * saw the mark (its own clock only: no two machines' times compared), and at the campaign's
   * end. The worker that set it sets it again if its requests still fail.
   */
  private clearOldMark(campaign: string, entry: Tracked, status: CampaignStatus): void {
    const ended = !this.tracked.has(campaign);
    const marked = status.stalled?.reason === "service_unreachable";
    if (!ended && !marked) {
      entry.markSeenAt = undefined;
      return;
    }
    if (!ended && entry.markSeenAt === undefined) {
      entry.markSeenAt = Date.now();
      return;
    }
    if (!ended && (entry.answeredAt ?? 0) <= entry.markSeenAt!) return;
    entry.markSeenAt = undefined;
    this.options.ledger.campaigns.clearMeta(campaign, ...STALL_FIELDS).catch(() => {
      // Redis trouble: a later answer tries again; once nothing is pending no one shows it.
    });
  }

  private report(campaign: string, entry: Tracked, status: CampaignStatus): void {
    const { log } = this.options;
    const now = Date.now();
    const done = doneRows(status);
    const failures = status.failed_final + status.failed_uncertain;
    const counts = {
      campaign,
      done,
      total: status.total,
      completed: status.completed,
      failed_final: status.failed_final,
      failed_uncertain: status.failed_uncertain,
      cancelled: status.cancelled,
    };
    if (status.state !== "paused" && status.state !== "held" && pendingRows(status) === 0) {
      const seconds = (now - entry.startedAt) / 1000;
      log.info(
        { ...counts, seconds: Math.round(seconds) },
        `campaign ${campaign}: done, ${status.completed} completed, ${status.failed_final} failed_final, ${status.failed_uncertain} failed_uncertain, ${status.cancelled} cancelled of ${status.total} rows (this worker followed it ${formatDuration(seconds)})`,
      );
      this.tracked.delete(campaign);
      return;
    }
    if (status.paused || status.state === "held") {
      const reason = status.paused?.reason ?? "held";
      if (entry.pausedReason !== reason) {
        entry.pausedReason = reason;
        log.info(
          { ...counts, reason },
          `campaign ${campaign}: paused (${reason}), ${done} of ${status.total} rows done`,
        );
      }
      return;
    }
    if (entry.pausedReason !== null) {
      entry.pausedReason = null;
      log.info(counts, `campaign ${campaign}: running again`);
    }
    const step = Math.max(1, Math.ceil(status.total * (this.options.stepShare ?? 0.05)));
    const due = now - entry.lastLineAt >= (this.options.intervalMs ?? 10_000);
    if (done === entry.lastLineDone || (!due && done - entry.lastLineDone < step)) return;
    const { rate, etaSeconds } = rateAndEta(
      done - entry.doneAtStart,
      now - entry.startedAt,
      status.total - done,
    );
    entry.lastLineAt = now;
    entry.lastLineDone = done;
    const pct = status.total > 0 ? Math.floor((done * 100) / status.total) : 100;
    log.info(
      {
        ...counts,
        rate: Number(rate.toFixed(2)),
        eta_s: Number.isFinite(etaSeconds) ? Math.round(etaSeconds) : null,
      },
      // Done is completed, failed and cancelled (docs/concepts.md, "Done"): the parts apart.
      `campaign ${campaign}: ${done}/${status.total} rows done (${pct}%), ${rate.toFixed(1)} rows/s, ETA ${formatDuration(etaSeconds)}, ${failures} failed${status.cancelled ? `, ${status.cancelled} cancelled` : ""}`,
    );
  }
}
