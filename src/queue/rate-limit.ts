import type { RateLimiterOptions } from "bullmq";

/**
 * Share of the service's limit the queue aims at. BullMQ reaches about 98% of its own limiter
 * (a short gap each window), so the headroom is small: 3000/min gives 5 jobs per 101 ms, at most
 * 2,975 in any 60 s.
 */
const HEADROOM = 0.995;

/**
 * BullMQ limiter for `perMinute` orders a minute, spread out in small windows. One window of a
 * minute would let the whole minute's allowance go in a burst, which a sliding-window limit at
 * the service answers with 429s; small even windows stay under it in any 60 s span.
 */
export function limiterFor(perMinute: number): RateLimiterOptions {
  const max = Math.max(1, Math.round(perMinute / 600));
  const duration = Math.ceil((max * 60_000) / (perMinute * HEADROOM));
  return { max, duration };
}
