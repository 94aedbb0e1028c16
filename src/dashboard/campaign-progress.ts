import type { CampaignStatus } from "../campaigns/status.js";

/** How far a campaign has come, and for a running one how fast. */
export interface CampaignProgress {
  /** Rows at their end: completed + failed_final + failed_uncertain + cancelled. */
  done: number;
  /** Rows with work ahead: queued + in_flight + submitted. */
  remaining: number;
  /**
   * Rows done per minute over the dashboard's own reads of the last minute (at least
   * MIN_SPAN_MS apart); null when not running or not measured yet.
   */
  rate_per_minute: number | null;
  /** Seconds to go at that rate; null without a rate, or when the rate is 0. */
  eta_seconds: number | null;
  /** How long the rate was measured over, in seconds; null without a rate. */
  measured_seconds: number | null;
}

/** Only reads this recent count toward the rate. */
const WINDOW_MS = 60_000;
/** Two reads closer than this give no rate (too noisy). */
const MIN_SPAN_MS = 3_000;
/** Reads closer than this to the previous one are not kept (several tabs polling). */
const MIN_GAP_MS = 1_000;

interface Sample {
  at: number;
  done: number;
}

function doneRows(s: CampaignStatus): number {
  return s.completed + s.failed_final + s.failed_uncertain + s.cancelled;
}

/**
 * Measures each running campaign's rate from this dashboard's own reads of its counts: the rows
 * done between the oldest read of the last minute and now, over the time between them. Nothing
 * is guessed from creation or approval times (a campaign paused for an hour would look slow).
 * A campaign not running has its reads dropped, so after a resume it is measured afresh.
 */
export class RateMeter {
  private readonly samples = new Map<string, Sample[]>();

  observe(status: CampaignStatus, now = Date.now()): CampaignProgress {
    const done = doneRows(status);
    const remaining = status.total - done;
    const base = { done, remaining };
    if (status.state !== "running") {
      this.samples.delete(status.campaign);
      return { ...base, rate_per_minute: null, eta_seconds: null, measured_seconds: null };
    }
    const kept = (this.samples.get(status.campaign) ?? []).filter(
      (s) => now - s.at <= WINDOW_MS && s.done <= done,
    );
    const last = kept.at(-1);
    if (!last || now - last.at >= MIN_GAP_MS) kept.push({ at: now, done });
    this.samples.set(status.campaign, kept);
    const first = kept[0]!;
    const span = now - first.at;
    if (span < MIN_SPAN_MS)
      return { ...base, rate_per_minute: null, eta_seconds: null, measured_seconds: null };
    const perMs = (done - first.done) / span;
    return {
      ...base,
      rate_per_minute: Math.round(perMs * 60_000 * 10) / 10,
      eta_seconds: perMs > 0 ? Math.ceil(remaining / perMs / 1000) : null,
      measured_seconds: Math.round(span / 1000),
    };
  }

  /** Forgets campaigns not in `names` (deleted, or no longer listed). */
  keepOnly(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const name of this.samples.keys()) if (!keep.has(name)) this.samples.delete(name);
  }
}
