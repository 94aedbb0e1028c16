import { describe, expect, it } from "vitest";
import { checkLimitResume } from "../src/campaigns/limit-resume.js";
import { planText } from "../src/cli/confirm-import.js";
import { loadConfig } from "../src/config.js";
import { dailyLimitOf, dayAfter, limitDay } from "../src/daily-limit.js";
import { limitReason } from "../src/ledger/daily-limit.js";

describe("GIFTJOBS_DAILY_LIMIT and GIFTJOBS_LIMIT_TZ", () => {
  it("reads one amount per currency at its scale; unset is no limit", () => {
    const config = loadConfig({ env: { GIFTJOBS_DAILY_LIMIT: "USD:5000, EUR:2000.5,JPY:100" } });
    expect(config.dailyLimit).toEqual({ USD: "5000.00", EUR: "2000.50", JPY: "100" });
    expect(config.limitTz).toBe("UTC");
    expect(dailyLimitOf(config)!.limits).toEqual(
      new Map([
        ["USD", { currency: "USD", amount: "5000.00", units: 500000n }],
        ["EUR", { currency: "EUR", amount: "2000.50", units: 200050n }],
        ["JPY", { currency: "JPY", amount: "100", units: 100n }],
      ]),
    );
    expect(loadConfig({ env: {} }).dailyLimit).toBeUndefined();
    expect(dailyLimitOf(loadConfig({ env: {} }))).toBeUndefined();
    expect(loadConfig({ env: { GIFTJOBS_LIMIT_TZ: "Europe/Paris" } }).limitTz).toBe("Europe/Paris");
  });

  it("a bad value is one line naming the setting", () => {
    const bad = (value: string) => () => loadConfig({ env: { GIFTJOBS_DAILY_LIMIT: value } });
    expect(bad("5000")).toThrow(/^GIFTJOBS_DAILY_LIMIT: must be CUR:AMOUNT,CUR:AMOUNT/);
    expect(bad("USD:-5")).toThrow(
      /^GIFTJOBS_DAILY_LIMIT: USD: the amount must be a plain decimal above 0 \(got "USD:-5"\)$/,
    );
    expect(bad("USD:5.001")).toThrow(/^GIFTJOBS_DAILY_LIMIT: USD: 5\.001 has more than 2 decimals/);
    expect(bad("USD:5,USD:6")).toThrow(/^GIFTJOBS_DAILY_LIMIT: names USD twice/);
    expect(() => loadConfig({ env: { GIFTJOBS_LIMIT_TZ: "Mars/Olympus" } })).toThrow(
      'GIFTJOBS_LIMIT_TZ: must be an IANA time zone, e.g. UTC or Europe/Paris (got "Mars/Olympus")',
    );
  });

  it("the day starts at midnight in GIFTJOBS_LIMIT_TZ", () => {
    const lateUtc = new Date("2024-05-01T23:30:00Z");
    expect(limitDay(lateUtc, "UTC")).toBe("2024-05-01");
    expect(limitDay(lateUtc, "Europe/Paris")).toBe("2024-05-02");
    expect(limitDay(lateUtc, "America/New_York")).toBe("2024-05-01");
    const earlyUtc = new Date("2024-05-02T03:00:00Z");
    expect(limitDay(earlyUtc, "America/New_York")).toBe("2024-05-01");
    expect(limitDay(new Date("2024-05-02T04:00:00Z"), "America/New_York")).toBe("2024-05-02");
    expect(dayAfter("2024-02-28")).toBe("2024-02-29");
    expect(dayAfter("2024-12-31")).toBe("2025-01-01");
    expect(dayAfter("2024-03-01", -7)).toBe("2024-02-23");
  });

  it("resume is refused the same day under the same limit; the next day or a higher limit lets it", () => {
    const reached = {
      currency: "USD",
      spent: 499000n,
      limit: 500000n,
      price: 2500n,
      day: "2024-05-01",
    };
    const reason = `${limitReason(reached, "Europe/Paris")}; then: giftjobs orders resume --campaign b`;
    expect(reason).toBe(
      "daily_limit: 4990.00 USD of the USD daily limit of 5000.00 USD spent on 2024-05-01 (Europe/Paris); the next order (25.00 USD) would pass it. Wait for 2024-05-02 (Europe/Paris), or raise GIFTJOBS_DAILY_LIMIT and restart the workers; then: giftjobs orders resume --campaign b",
    );
    const limit = (amount: string) =>
      dailyLimitOf({ dailyLimit: { USD: amount }, limitTz: "Europe/Paris" });
    // 22:30 UTC on the 1st is already the 2nd in Paris (UTC+2 in May).
    const sameDay = new Date("2024-05-01T21:00:00Z");
    const nextDay = new Date("2024-05-01T22:30:00Z");
    expect(() => checkLimitResume("b", reason, limit("5000"), sameDay)).toThrow(
      "campaign b was paused by the USD daily limit of 5000.00 USD today (2024-05-01, Europe/Paris): resume it from 2024-05-02 (Europe/Paris), or raise GIFTJOBS_DAILY_LIMIT (and restart the workers) first",
    );
    expect(() => checkLimitResume("b", reason, limit("4000"), sameDay)).toThrow(
      /^campaign b was paused/,
    );
    expect(() => checkLimitResume("b", reason, limit("5000"), nextDay)).not.toThrow();
    expect(() => checkLimitResume("b", reason, limit("5000.01"), sameDay)).not.toThrow();
    expect(() => checkLimitResume("b", "paused by operator", limit("5000"), sameDay)).not.toThrow();
    expect(() => checkLimitResume("b", reason, undefined, sameDay)).not.toThrow();
  });

  it("the confirmation shows the import's line before the question", () => {
    const text = planText({
      campaign: "big",
      rows: 2,
      totals: { USD: { face_value: "70.00", price: "70.00", rows: 2 } },
      held: false,
      dailyLimit: [
        {
          currency: "USD",
          price: "70.00",
          left: "30.00",
          limit: "50.00",
          day: "2024-05-01",
          tz: "UTC",
        },
      ],
    });
    expect(text).toBe(
      "2 new rows for new campaign big:\n" +
        "  USD: face value 70.00, price 70.00 (2 rows)\n" +
        "  daily limit: the new rows cost 70.00 USD, over the 30.00 USD left of today's USD limit of 50.00 USD (2024-05-01, UTC): what fits is sent today, then the campaigns of that currency pause with daily_limit until the next day or a raised GIFTJOBS_DAILY_LIMIT\n",
    );
  });
});
