import { describe, expect, it } from "vitest";
import { FileAuditTrail } from "../../src/audit/file-trail.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { dayAfter, limitDay } from "../../src/daily-limit.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { dailySpendKey } from "../../src/ledger/daily-limit.js";
import { currencyDecimals, fromUnits, toUnits } from "../../src/money.js";
import { depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const { setup, work, stopWorkers } = useCampaignEnv({ asyncCompleteMs: 50 });

describe("the daily limit across campaigns", () => {
  it("two campaigns of one currency: the second pauses at the limit, the day's spend never passes it", async () => {
    const e = await setup("daily-limit");
    const first = validCsv(e.index, 6, "first");
    const second = validCsv(e.index, 8, "second");
    const { currency } = first;
    expect(second.currency).toBe(currency);
    const scale = currencyDecimals(currency);
    const units = (amount: string) => toUnits(amount, scale);
    const fileA = await csvFile(e, "a.csv", first.text);
    const fileB = await csvFile(e, "b.csv", second.text);
    const priceA = units(
      (await importCampaign({ file: fileA, campaign: "a", dryRun: true }, depsOf(e))).totals[
        currency
      ]!.price,
    );
    const priceB = units(
      (await importCampaign({ file: fileB, campaign: "b", dryRun: true }, depsOf(e))).totals[
        currency
      ]!.price,
    );
    // Room for the first campaign and about half of the second.
    const limit = priceA + priceB / 2n;
    const config = {
      ...e.config,
      dailyLimit: { [currency]: fromUnits(limit, scale) },
      limitTz: "UTC",
    };

    await importCampaign({ file: fileA, campaign: "a" }, depsOf(e));
    await work(e, { config });
    await eventually(
      async () => (await campaignStatus(e.ledger, "a")).completed === 6,
      "the first campaign completed",
    );
    await importCampaign({ file: fileB, campaign: "b" }, depsOf(e));
    await eventually(
      async () => (await e.ledger.campaigns.meta("b")).state === "paused",
      "the second campaign paused",
    );
    const reason = (await e.ledger.campaigns.meta("b")).paused_reason!;
    const day = limitDay(new Date(), "UTC");
    expect(reason).toMatch(
      new RegExp(
        `^daily_limit: [\\d.]+ ${currency} of the ${currency} daily limit of ${fromUnits(limit, scale).replace(".", "\\.")} ${currency} spent on ${day} \\(UTC\\); the next order \\([\\d.]+ ${currency}\\) would pass it\\. Wait for \\d{4}-\\d{2}-\\d{2} \\(UTC\\), or raise GIFTJOBS_DAILY_LIMIT and restart the workers; then: giftjobs orders resume --campaign b$`,
      ),
    );
    // The worker's pause is in the audit trail, once, with its type.
    const trail = new FileAuditTrail(e.dataDir);
    await eventually(async () => (await trail.list({ campaign: "b" })).length > 0, "audited");
    expect(await trail.list({ campaign: "b" })).toEqual([
      expect.objectContaining({
        action: "auto_pause",
        details: { by: "worker", reason_type: "daily_limit", reason },
      }),
    ]);
    // The first campaign, finished, is not paused.
    expect((await e.ledger.campaigns.meta("a")).state).toBe("running");
    await eventually(async () => {
      const s = await campaignStatus(e.ledger, "b");
      return s.submitted === 0 && s.in_flight === 0;
    }, "the orders sent finished");
    await holdsFor(
      async () => (await e.ledger.campaigns.meta("b")).state === "paused",
      300,
      "the paused campaign stays paused",
    );
    await stopWorkers();

    // Every order the service made, by its own price: all of this currency.
    const made = (await sandboxOrders(e.sandbox)) as unknown as {
      currency: string;
      total_price: string;
    }[];
    expect(made.every((o) => o.currency === currency)).toBe(true);
    const spent = made.reduce((sum, o) => sum + units(o.total_price), 0n);
    expect(spent).toBeGreaterThan(priceA);
    expect(spent).toBeLessThanOrEqual(limit);
    const status = await campaignStatus(e.ledger, "b");
    expect(status.completed).toBeGreaterThan(0);
    expect(status.completed).toBeLessThan(8);
    // The ledger's day counts what the service made: every order here completed.
    const counted = await e.redis.hget(dailySpendKey(e.config.prefix), `${currency}:${day}`);
    expect(BigInt(counted!)).toBe(spent);

    // Shown as any pause reason is: orders status and orders list --json.
    const shown = await giftjobs(e, ["orders", "status", "--campaign", "b"]);
    expect(shown.stdout).toContain(
      `PAUSED since ${(await e.ledger.campaigns.meta("b")).paused_at}: ${reason}\n`,
    );
    const listed = JSON.parse((await giftjobs(e, ["orders", "list", "--json"])).stdout) as {
      campaign: string;
      paused: { reason: string } | null;
    }[];
    expect(listed.find((c) => c.campaign === "b")!.paused!.reason).toBe(reason);

    // The same day, under the same limit, resume is refused in one line; a raised limit lets it.
    const env = { GIFTJOBS_DAILY_LIMIT: `${currency}:${fromUnits(limit, scale)}` };
    const refused = await giftjobs(e, ["orders", "resume", "--campaign", "b"], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `giftjobs: error: campaign b was paused by the ${currency} daily limit of ${fromUnits(limit, scale)} ${currency} today (${day}, UTC): resume it from ${dayAfter(day)} (UTC), or raise GIFTJOBS_DAILY_LIMIT (and restart the workers) first\n`,
    );
    const raised = `${currency}:${fromUnits(limit + priceB, scale)}`;
    const resumed = await giftjobs(e, ["orders", "resume", "--campaign", "b"], {
      GIFTJOBS_DAILY_LIMIT: raised,
    });
    expect(resumed.code).toBe(0);
    await work(e, {
      config: { ...config, dailyLimit: { [currency]: fromUnits(limit + priceB, scale) } },
    });
    await eventually(
      async () => (await campaignStatus(e.ledger, "b")).completed === 8,
      "the second campaign completed under the raised limit",
    );
  });

  it("a limit set at noon counts the morning: the afternoon stops at the limit (the sandbox's orders)", async () => {
    const e = await setup("daily-limit-noon");
    const morning = validCsv(e.index, 6, "morning");
    const afternoon = validCsv(e.index, 8, "afternoon");
    const { currency } = morning;
    expect(afternoon.currency).toBe(currency);
    const scale = currencyDecimals(currency);
    const units = (amount: string) => toUnits(amount, scale);
    const made = async () =>
      ((await sandboxOrders(e.sandbox)) as unknown as { total_price: string }[]).reduce(
        (sum, o) => sum + units(o.total_price),
        0n,
      );
    const day = limitDay(new Date(), "UTC");
    const key = dailySpendKey(e.config.prefix);

    // The morning, no limit set: every order sent still counts in the day's spend.
    await importCampaign(
      { file: await csvFile(e, "m.csv", morning.text), campaign: "morning" },
      depsOf(e),
    );
    await work(e, { config: { ...e.config, dailyLimit: undefined, limitTz: "UTC" } });
    await eventually(
      async () => (await campaignStatus(e.ledger, "morning")).completed === 6,
      "the morning's campaign completed",
    );
    await stopWorkers();
    const morningSpent = await made();
    expect(BigInt((await e.redis.hget(key, `${currency}:${day}`)) ?? "0")).toBe(morningSpent);

    // Noon: the workers restarted with a limit that leaves room for about half the afternoon.
    const fileB = await csvFile(e, "a.csv", afternoon.text);
    const priceB = units(
      (await importCampaign({ file: fileB, campaign: "afternoon", dryRun: true }, depsOf(e)))
        .totals[currency]!.price,
    );
    const limit = morningSpent + priceB / 2n;
    const limitText = fromUnits(limit, scale);
    await importCampaign({ file: fileB, campaign: "afternoon" }, depsOf(e));
    await work(e, {
      config: { ...e.config, dailyLimit: { [currency]: limitText }, limitTz: "UTC" },
    });
    await eventually(
      async () => (await e.ledger.campaigns.meta("afternoon")).state === "paused",
      "the afternoon's campaign paused",
    );
    await eventually(async () => {
      const s = await campaignStatus(e.ledger, "afternoon");
      return s.submitted === 0 && s.in_flight === 0;
    }, "the orders sent finished");
    await stopWorkers();

    // What the service made that day, by its own prices: within the limit, morning included.
    const spent = await made();
    expect(spent).toBeGreaterThan(morningSpent);
    expect(spent).toBeLessThanOrEqual(limit);
    expect((await campaignStatus(e.ledger, "afternoon")).completed).toBeLessThan(8);
    expect(BigInt((await e.redis.hget(key, `${currency}:${day}`))!)).toBe(spent);

    // orders list and doctor say what today cost, beside the limit where they run.
    const env = { GIFTJOBS_DAILY_LIMIT: `${currency}:${limitText}` };
    const line = `today (${day}, UTC): ${fromUnits(spent, scale)} ${currency} spent of the ${limitText} ${currency} daily limit`;
    expect((await giftjobs(e, ["orders", "list"], env)).stdout).toContain(`\n\n${line}\n`);
    const doctor = JSON.parse((await giftjobs(e, ["doctor", "--json"], env)).stdout) as {
      checks: { name: string; ok: boolean; detail: string }[];
    };
    expect(doctor.checks.find((c) => c.name === "daily-spend")).toEqual({
      name: "daily-spend",
      ok: true,
      detail: line,
    });
    const bare = await giftjobs(e, ["orders", "list"], { GIFTJOBS_DAILY_LIMIT: "" });
    expect(bare.stdout).toContain(
      `\ntoday (${day}, UTC): ${fromUnits(spent, scale)} ${currency} spent (no limit)\n`,
    );
  });

  it("START reserves an order's price once; an order ending failed_final gives it back", async () => {
    const e = await setup("daily-limit-start");
    const { text, currency } = validCsv(e.index, 1, "q");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign({ file, campaign: "q" }, depsOf(e));
    const [number] = (await e.redis.lrange(e.ledger.keys("q").pending, 0, -1)).map(Number);
    const price = BigInt((await e.ledger.orders.getOrder("q", number!))!.price!);
    const key = dailySpendKey(e.config.prefix);
    const day = limitDay(new Date(), "UTC");
    const limitOf = (units: bigint) => ({
      limits: new Map([[currency, { currency, amount: "", units }]]),
      tz: "UTC",
    });

    const refused = await e.ledger.orders.start({
      campaign: "q",
      number: number!,
      patch: {},
      limit: limitOf(price - 1n),
    });
    expect(refused).toMatchObject({
      kind: "daily-limit",
      reached: { currency, spent: 0n, limit: price - 1n, price, day },
    });
    expect((await e.ledger.orders.getOrder("q", number!))!.status).toBe("queued");
    expect(await e.redis.hget(key, `${currency}:${day}`)).toBeNull();

    const limit = limitOf(price);
    expect(
      (await e.ledger.orders.start({ campaign: "q", number: number!, patch: {}, limit })).kind,
    ).toBe("started");
    expect(await e.redis.hget(key, `${currency}:${day}`)).toBe(String(price));
    // An attempt again (a retry) is not counted twice.
    await e.ledger.orders.transition({
      campaign: "q",
      number: number!,
      from: ["in_flight"],
      to: "queued",
    });
    expect(
      (await e.ledger.orders.start({ campaign: "q", number: number!, patch: {}, limit })).kind,
    ).toBe("started");
    expect(await e.redis.hget(key, `${currency}:${day}`)).toBe(String(price));
    expect(await e.redis.ttl(key)).toBeGreaterThan(7 * 86400);

    await e.ledger.orders.transition({
      campaign: "q",
      number: number!,
      from: ["in_flight"],
      to: "failed_final",
      patch: { error_type: "x" },
    });
    expect(await e.redis.hget(key, `${currency}:${day}`)).toBe("0");
  });

  it("an import whose price alone passes what is left today says so before it asks", async () => {
    const e = await setup("daily-limit-import");
    const { text, currency } = validCsv(e.index, 2, "n");
    const file = await csvFile(e, "n.csv", text);
    const day = limitDay(new Date(), "UTC");
    const limitEnv = { GIFTJOBS_DAILY_LIMIT: `${currency}:0.01` };
    const dry = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "n", "--dry-run"],
      limitEnv,
    );
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(
      new RegExp(
        `  daily limit: the new rows cost [\\d.]+ ${currency}, over the 0\\.01 ${currency} left of today's ${currency} limit of 0\\.01 ${currency} \\(${day}, UTC\\): what fits is sent today, then the campaigns of that currency pause with daily_limit until the next day or a raised GIFTJOBS_DAILY_LIMIT\n`,
      ),
    );
    const json = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "n", "--yes", "--hold", "--json"],
      limitEnv,
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).daily_limit).toEqual([
      expect.objectContaining({ currency, left: "0.01", limit: "0.01", day, tz: "UTC" }),
    ]);
    // Under a limit it fits, nothing is said.
    const roomy = await giftjobs(e, ["orders", "import", file, "--campaign", "m", "--dry-run"], {
      GIFTJOBS_DAILY_LIMIT: `${currency}:100000`,
    });
    expect(roomy.stdout).not.toMatch(/daily limit/);
  });
});
