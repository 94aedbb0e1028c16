import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { minuteChart, sparkline } from "../../src/dashboard/minute-chart.js";
import { bucketed, MinuteHistory, minutePoints } from "../../src/dashboard/minute-history.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { testRedis, uniquePrefix } from "../helpers/redis.js";

/** The points the dashboard's chart draws at most. */
const CHART_POINTS = 120;

const T0 = Date.parse("2026-11-25T10:00:00Z");
const at = (minute: number) => T0 + minute * 60_000;

describe("rows per minute: the ledger's count (real Redis)", () => {
  let redis: Redis;
  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it("counts rows leaving sending for an end, completed and failed apart, and nothing else", async () => {
    const prefix = uniquePrefix("minutes");
    const ledger = new Ledger(redis, prefix);
    const history = new MinuteHistory(redis, prefix);
    await ledger.campaigns.register("m", { execution_mode: "sync" });
    await ledger.orders.record("m", oneRowOrders("m", ["a", "b", "c", "d", "e", "f"]));
    await ledger.orders.transition({
      campaign: "m",
      number: 1,
      from: ["queued"],
      to: "completed",
      patch: { order_id: "O-1" },
    });
    await ledger.orders.transition({ campaign: "m", number: 2, from: ["queued"], to: "in_flight" });
    await ledger.orders.transition({
      campaign: "m",
      number: 2,
      from: ["in_flight"],
      to: "completed",
      patch: { order_id: "O-2" },
    });
    await ledger.orders.transition({
      campaign: "m",
      number: 3,
      from: ["queued"],
      to: "failed_final",
      patch: { error_type: "x" },
    });
    await ledger.orders.transition({
      campaign: "m",
      number: 4,
      from: ["queued"],
      to: "failed_uncertain",
      patch: { error_type: "timeout" },
    });
    // An ended order settled later (a reconcile) is not new work; a cancel is not an end of sending.
    await ledger.orders.transition({
      campaign: "m",
      number: 4,
      from: ["failed_uncertain"],
      to: "completed",
      patch: { order_id: "O-4" },
    });
    await ledger.orders.transition({ campaign: "m", number: 5, from: ["queued"], to: "cancelled" });
    const points = await history.read("m");
    const sum = (k: "completed" | "failed") => points.reduce((n, p) => n + p[k], 0);
    expect(sum("completed")).toBe(2);
    expect(sum("failed")).toBe(2);
    expect(points.length).toBeGreaterThanOrEqual(1);
    const ttl = await redis.ttl(history.key("m"));
    expect(ttl).toBeGreaterThan(29 * 24 * 3600);
    expect(ttl).toBeLessThanOrEqual(30 * 24 * 3600);
    // A campaign with no row ended has no key at all.
    expect(await history.read("never")).toEqual([]);
  });
});

describe("rows per minute: buckets and the SVG", () => {
  it("reads the hash's fields, oldest first, ignoring others", () => {
    expect(
      minutePoints({
        "c:2026-11-25T10:01": "4",
        "f:2026-11-25T10:01": "1",
        "c:2026-11-25T10:00": "2",
        junk: "9",
        "c:bad": "1",
      }),
    ).toEqual([
      { at: at(0), completed: 2, failed: 0 },
      { at: at(1), completed: 4, failed: 1 },
    ]);
  });

  it("keeps quiet minutes, and a long campaign to at most the buckets asked, as rates per minute", () => {
    const short = bucketed(
      [
        { at: at(0), completed: 3, failed: 0 },
        { at: at(3), completed: 1, failed: 1 },
      ],
      CHART_POINTS,
    );
    expect(short.minutes).toBe(1);
    expect(short.points.map((p) => p.completed)).toEqual([3, 0, 0, 1]);
    // A day and a half, 6 rows a minute: 2160 minutes in 120 buckets of 18.
    const long = Array.from({ length: 2160 }, (_, m) => ({ at: at(m), completed: 6, failed: 0 }));
    const b = bucketed(long, CHART_POINTS);
    expect(b.minutes).toBe(18);
    expect(b.points.length).toBe(120);
    expect(b.points.every((p) => p.completed === 6)).toBe(true);
    // Running: the minutes up to now count, quiet.
    const until = bucketed([{ at: at(0), completed: 1, failed: 0 }], CHART_POINTS, at(9) + 30_000);
    expect(until.points.length).toBe(10);
  });

  it("draws at most CHART_POINTS bars whatever the length, and nothing but markup of its own", () => {
    const long = Array.from({ length: 10_000 }, (_, m) => ({
      at: at(m),
      completed: m % 7,
      failed: m % 50 === 0 ? 2 : 0,
    }));
    const svg = minuteChart(long);
    expect((svg.match(/<rect class="completed"/g) ?? []).length).toBeLessThanOrEqual(CHART_POINTS);
    expect(svg).toContain("each bar 84 minutes");
    expect(svg).not.toMatch(/<script|href=/);
    expect(minuteChart([])).toContain("No row has ended yet");
    expect(sparkline([])).toBe("");
    expect((sparkline(long).match(/ /g) ?? []).length).toBeLessThan(200);
  });
});
