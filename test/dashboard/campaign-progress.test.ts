import { describe, expect, it } from "vitest";
import type { CampaignStatus } from "../../src/campaigns/status.js";
import { RateMeter } from "../../src/dashboard/campaign-progress.js";

const status = (completed: number, state: CampaignStatus["state"] = "running"): CampaignStatus => ({
  campaign: "c",
  state,
  total: 100,
  queued: 100 - completed,
  in_flight: 0,
  submitted: 0,
  completed,
  failed_final: 0,
  failed_uncertain: 0,
  cancelled: 0,
  replayed: 0,
  scheduled: 0,
  next_send_at: null,
  paused: null,
  stalled: null,
});

describe("RateMeter", () => {
  it("gives no rate from one read, then rows per minute and an ETA from two 3 s apart", () => {
    const meter = new RateMeter();
    expect(meter.observe(status(10), 0)).toEqual({
      done: 10,
      remaining: 90,
      rate_per_minute: null,
      eta_seconds: null,
      measured_seconds: null,
    });
    expect(meter.observe(status(11), 2_000).rate_per_minute).toBeNull();
    expect(meter.observe(status(20), 10_000)).toEqual({
      done: 20,
      remaining: 80,
      rate_per_minute: 60,
      eta_seconds: 80,
      measured_seconds: 10,
    });
  });

  it("measures over the last minute only", () => {
    const meter = new RateMeter();
    meter.observe(status(0), 0);
    meter.observe(status(50), 30_000);
    // The read at 0 is out of the window: 50 -> 60 over 40 s.
    expect(meter.observe(status(60), 70_000)).toMatchObject({
      rate_per_minute: 15,
      measured_seconds: 40,
    });
  });

  it("says so when nothing moves, and starts afresh after a pause", () => {
    const meter = new RateMeter();
    meter.observe(status(10), 0);
    expect(meter.observe(status(10), 5_000)).toMatchObject({
      rate_per_minute: 0,
      eta_seconds: null,
    });
    expect(meter.observe(status(10, "paused"), 6_000).rate_per_minute).toBeNull();
    expect(meter.observe(status(30), 60_000).rate_per_minute).toBeNull();
    expect(meter.observe(status(40), 65_000).rate_per_minute).toBe(120);
  });
});
