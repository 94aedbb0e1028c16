import type { RateLimiterOptions } from "bullmq";
import { WORKER_DEFAULTS } from "../../src/worker-defaults.js";

/**
 * BullMQ limiter for a service that allows `perMinute` orders in any sliding minute.
 *
 * The limiter lets `max` jobs start at the beginning of each `duration` window, so a sliding
 * minute can hold the bursts of up to 60/d + 1 windows: max x (60 s / d + 1) <= perMinute keeps
 * it under the service's limit in the worst case, hence d = 60 s x max / (perMinute - max).
 * Windows of about 400 ms (max = perMinute / 150) balance that bound against the small gap
 * BullMQ loses at each window: about 99% of the limit in theory, no 429 from bursts.
 */
export function limiterFor(perMinute: number): RateLimiterOptions {
  // One a minute: a window just over a minute, so two starts never share one.
  if (perMinute < 2) return { max: 1, duration: 60_001 };
  const max = Math.max(1, Math.round(perMinute / 150));
  const duration = Math.ceil((60_000 * max) / (perMinute - max));
  return { max, duration };
}

/**
 * Backoff after 429s: at least 5 s, doubling while they repeat, reset by a success.
 * One instance per worker process; BullMQ applies the wait queue-wide.
 */
export class RateLimitBackoff {
  private streak = 0;
  constructor(
    private readonly baseMs: number = WORKER_DEFAULTS.rateLimitBaseMs,
    private readonly maxMs = 60_000,
  ) {}
  next(): number {
    this.streak += 1;
    return Math.min(this.baseMs * 2 ** (this.streak - 1), this.maxMs);
  }
  reset(): void {
    this.streak = 0;
  }
}
