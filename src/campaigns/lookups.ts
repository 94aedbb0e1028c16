import { type RetryOptions, withRetries } from "../catalog/retry-policy.js";

/** How fast the service is read by `orders reconcile` and `orders payouts`. */
export interface LookupPace {
  /**
   * Requests started per minute at most, retries included. The service documents a limit of
   * 300 a minute for creating orders only; reads share the account with the workers' status
   * checks, so these commands keep to a budget of their own. @defaultValue 300
   */
  perMinute?: number;
  /** Requests in flight at once. @defaultValue 4 */
  concurrency?: number;
  /** Retries of a 5xx, timeout, dropped connection or 429 (5 s at least after a 429). */
  retry?: RetryOptions;
  signal?: AbortSignal;
}

/**
 * Reads of the service (GET /v2/order, GET /v2/order/{id}) within a budget: starts spaced
 * 60 s / perMinute apart, at most `concurrency` in flight, each retried on its own like a
 * catalog page (withRetries: 429s wait 5 s and more).
 */
export class Lookups {
  /** Requests started, retries included. */
  started = 0;
  private readonly interval: number;
  private readonly concurrency: number;
  private nextStart = 0;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly pace: LookupPace = {}) {
    this.interval = 60_000 / Math.max(1, pace.perMinute ?? 300);
    this.concurrency = Math.max(1, pace.concurrency ?? 4);
  }

  /** Runs `request` when the budget allows, retrying what may succeed if sent again. */
  run<T>(request: (signal?: AbortSignal) => Promise<T>): Promise<T> {
    const once = async () => {
      await this.slot();
      try {
        return await request(this.pace.signal);
      } finally {
        this.release();
      }
    };
    return withRetries(once, this.pace.retry, this.pace.signal);
  }

  /** Runs `each` over `items`, `concurrency` at a time (the budget spaces their requests). */
  async forEach<T>(items: Iterable<T>, each: (item: T) => Promise<void>): Promise<void> {
    const iterator = items[Symbol.iterator]();
    // The first failure ends the run: the other workers take no more items.
    let failed = false;
    const worker = async () => {
      for (let next = iterator.next(); !next.done && !failed; next = iterator.next()) {
        try {
          await each(next.value);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: this.concurrency }, worker));
  }

  private async slot(): Promise<void> {
    while (this.active >= this.concurrency) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.active += 1;
    const now = Date.now();
    const at = Math.max(now, this.nextStart);
    this.nextStart = at + this.interval;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
    this.started += 1;
  }

  private release(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}
