import type { RateLimiterOptions } from "bullmq";
import { describe, expect, it } from "vitest";
import { limiterFor } from "../../../jobs/orders/rate-limit.js";

/** The most jobs a limiter can start in any sliding minute (bursts at window starts). */
function worstCaseMinute({ max, duration }: RateLimiterOptions): number {
  return max * (Math.floor(60_000 / duration) + 1);
}

describe("limiterFor", () => {
  it("never lets a sliding minute exceed the service's limit, and uses nearly all of it", () => {
    for (const perMinute of [1, 2, 10, 60, 120, 300, 500, 1000, 1200, 3000, 6000, 60_000]) {
      const limiter = limiterFor(perMinute);
      expect(worstCaseMinute(limiter), `worst case at ${perMinute}/min`).toBeLessThanOrEqual(
        perMinute,
      );
      const rate = (limiter.max * 60_000) / limiter.duration;
      if (perMinute >= 60)
        expect(rate / perMinute, `rate at ${perMinute}/min`).toBeGreaterThanOrEqual(0.98);
    }
  });

  it("uses windows of about 400 ms for the service's limits", () => {
    expect(limiterFor(300)).toEqual({ max: 2, duration: 403 });
    expect(limiterFor(3000)).toEqual({ max: 20, duration: 403 });
  });
});
