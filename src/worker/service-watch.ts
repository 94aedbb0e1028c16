import { ApiError, ServiceUnreachableError } from "../api/errors/index.js";
import { serviceStallMark } from "../campaigns/stall.js";
import type { ServiceContact } from "../campaigns/worker-beats.js";
import { ENV_NAMES } from "../config.js";
import { type Logger, maskEmails } from "../log.js";

export interface ServiceWatchOptions {
  /** The service's base URL (shown without user name or password). */
  url: string;
  log: Logger;
  /** Sets the campaign's mark (`service_unreachable: URL: ERROR`) and since when (ISO). */
  mark: (campaign: string, reason: string, since: string) => Promise<void>;
  /** Removes a mark this watch set, the service answering again. */
  unmark: (campaign: string) => Promise<void>;
  /** Told of each answer the service gave about `campaign` (the tracker's marks of others). */
  onAnswered?: (campaign: string) => void;
  /** A mark that could not be written (Redis away, say). */
  onError: (error: unknown) => void;
  /** Failures with no answer between, for this long, before the first line. @defaultValue 5000 */
  quietMs?: number;
  /** While it lasts, a line at most this often (if requests still fail). @defaultValue 30000 */
  everyMs?: number;
}

/** How a request ended, as far as reaching the service goes. */
type Reach = "answered" | "unreachable" | "unknown";

/** A request that got no answer worth the name: refused, not found, timed out, reset, 5xx. */
function reachOf(error: unknown): Reach {
  if (error === undefined) return "answered";
  if (!(error instanceof ApiError)) return "unknown"; // a bug, Redis: nothing of the service
  if (error.status === 0) return error.type === "aborted" ? "unknown" : "unreachable";
  return error.status >= 500 ? "unreachable" : "answered";
}

/** `type: what`, e.g. `connection_refused: connection refused by 127.0.0.1:4010`. No API key. */
function errorText(error: ApiError): string {
  const what = error instanceof ServiceUnreachableError ? error.reason : error.message;
  const status = error.status >= 500 ? `HTTP ${error.status} ` : "";
  return maskEmails(`${status}${error.type}: ${what}`).slice(0, 300);
}

/** The URL as lines and marks show it: no user name or password, no trailing slash. */
function shownServiceUrl(base: string): string {
  try {
    const url = new URL(base);
    url.username = "";
    url.password = "";
    return url.href.replace(/\/$/, "");
  } catch {
    return "the configured service";
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Whether this worker reaches the service, told to the operator (docs/architecture/operators.md,
 * "Stalled campaigns"). Every order request and status poll reports how it ended. Failures that
 * go on for `quietMs` with no answer between (at least two: one 500 retried is no outage) are
 * one `warn` line naming the URL and the last error, then one every `everyMs` while requests
 * still fail, and one `info` line when the service answers again; the per-request lines stay
 * `debug`. Meanwhile the campaigns whose requests failed carry a mark in their meta
 * (`stalled_reason`), which `orders status`, `orders list`, the dashboard and the metrics show;
 * it goes when the service answers again (here, or in another worker's campaign tracker).
 */
export class ServiceWatch {
  private readonly url: string;
  private lastAnswerAt: number | undefined;
  private lastError: string | undefined;
  /** Failures since the last answer, and of which campaigns. */
  private streak: { since: number; failures: number; campaigns: Set<string> } | undefined;
  /** Told: since when, the last line, the campaigns that failed since it, those marked. */
  private down:
    | { since: number; lastLine: number; failedSinceLine: Set<string>; marked: Set<string> }
    | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ServiceWatchOptions) {
    this.url = shownServiceUrl(options.url);
  }

  /** A request about `campaign` ended: `error` undefined when the service answered. */
  ended(campaign: string, error?: unknown): void {
    const reach = reachOf(error);
    if (reach === "answered") this.answered(campaign);
    else if (reach === "unreachable") this.failed(campaign, errorText(error as ApiError));
  }

  /**
   * Whether this worker knows the service down: requests failed for `quietMs` with no answer
   * between (the first line was written), until the next answer.
   */
  isDown(): boolean {
    return this.down !== undefined;
  }

  /**
   * A job of `campaign` was put back unsent while the service is down: the campaign waits on it
   * as much as one whose request failed, so it gets the mark too (now, if it has none yet).
   */
  waiting(campaign: string): void {
    const down = this.down;
    if (!down || down.marked.has(campaign) || down.failedSinceLine.has(campaign)) return;
    down.failedSinceLine.add(campaign);
    if (down.lastLine > 0) this.mark([campaign], down);
  }

  /** The service as this worker sees it, for its heartbeat. */
  contact(): ServiceContact {
    return {
      url: this.url,
      last_answer_at: this.lastAnswerAt === undefined ? null : iso(this.lastAnswerAt),
      last_error: this.lastError ?? null,
      unreachable_since: this.down ? iso(this.down.since) : null,
    };
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private answered(campaign: string): void {
    const now = Date.now();
    this.lastAnswerAt = now;
    this.streak = undefined;
    this.options.onAnswered?.(campaign);
    const down = this.down;
    if (!down) return;
    this.down = undefined;
    this.close();
    const seconds = Math.round((now - down.since) / 1000);
    this.options.log.info(
      { url: this.url, seconds },
      `the service at ${this.url} answers again after ${seconds} s`,
    );
    for (const marked of down.marked)
      this.options.unmark(marked).catch((error: unknown) => this.options.onError(error));
  }

  private failed(campaign: string, error: string): void {
    this.lastError = error;
    this.streak ??= { since: Date.now(), failures: 0, campaigns: new Set() };
    this.streak.failures += 1;
    this.streak.campaigns.add(campaign);
    this.down?.failedSinceLine.add(campaign);
    this.timer ??= setInterval(() => this.check(), 1000);
    this.timer.unref();
    this.check();
  }

  /** After each failure and every second: the first line once quiet is over, then the next. */
  private check(): void {
    const now = Date.now();
    const streak = this.streak;
    if (!this.down) {
      if (!streak || streak.failures < 2 || now - streak.since < (this.options.quietMs ?? 5000))
        return;
      this.down = {
        since: streak.since,
        lastLine: 0,
        failedSinceLine: streak.campaigns,
        marked: new Set(),
      };
    }
    const down = this.down;
    if (down.failedSinceLine.size === 0 || now - down.lastLine < (this.options.everyMs ?? 30_000))
      return;
    const campaigns = [...down.failedSinceLine];
    down.lastLine = now;
    down.failedSinceLine = new Set();
    const seconds = Math.round((now - down.since) / 1000);
    this.options.log.warn(
      { url: this.url, error: this.lastError, seconds, campaigns },
      `cannot reach the service at ${this.url} for ${seconds} s (${this.lastError}): orders ` +
        "wait and are retried under their same keys; check that the service is up and " +
        `${ENV_NAMES.apiUrl} is right`,
    );
    this.mark(campaigns, down);
  }

  private mark(campaigns: string[], down: NonNullable<ServiceWatch["down"]>): void {
    const reason = serviceStallMark(this.url, this.lastError ?? "no answer");
    const failed = (error: unknown) => this.options.onError(error);
    for (const campaign of campaigns)
      this.options.mark(campaign, reason, iso(down.since)).then(() => {
        down.marked.add(campaign);
        // The service answered while the mark was on its way: take it off again.
        if (this.down !== down) this.options.unmark(campaign).catch(failed);
      }, failed);
  }
}
