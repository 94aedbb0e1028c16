import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redis } from "ioredis";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { pauseCampaign } from "../../src/campaigns/control.js";
import { writeReport } from "../../src/campaigns/report.js";
import { storedState } from "../../src/campaigns/state.js";
import { type Config, loadConfig } from "../../src/config.js";
import { limitDay } from "../../src/daily-limit.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { limitReason } from "../../src/ledger/daily-limit.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { ARTIFACTS, launchBrowser } from "../helpers/browser.js";
import { dashboardLedger } from "../helpers/dashboard-ledger.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const CAMPAIGN = "winter-fails";
const HOSTILE_REFERENCE = `<img src=x onerror="window.__pwned=1">`;

/**
 * `winter-fails` (running): line 2 completed, 3 failed_final (its message names an e-mail
 * address), 4 failed_uncertain, 5 and 6 queued.
 */
async function seed(ledger: Ledger): Promise<void> {
  await ledger.campaigns.register(CAMPAIGN, { execution_mode: "sync", "budget:USD": "10000" });
  const ids = ["a", "b", "c", "d", "e"];
  await ledger.orders.record(
    CAMPAIGN,
    oneRowOrders(CAMPAIGN, ids, {
      row: (i) => (i === 1 ? { reference: HOSTILE_REFERENCE } : {}),
    }),
  );
  await ledger.orders.transition({
    campaign: CAMPAIGN,
    number: 1,
    from: ["queued"],
    to: "completed",
    patch: { order_id: "O-1" },
  });
  await ledger.orders.transition({
    campaign: CAMPAIGN,
    number: 2,
    from: ["queued"],
    to: "failed_final",
    patch: {
      error_type: "validation_error",
      error_message: "distribution_method.email_address jane.doe@example.com is not valid",
    },
  });
  await ledger.orders.transition({
    campaign: CAMPAIGN,
    number: 3,
    from: ["queued"],
    to: "failed_uncertain",
    patch: {
      error_type: "timeout",
      error_message: "no answer after 8 attempts",
    },
  });
}

describe("giftjobs dashboard: campaign page", () => {
  let browser: Browser;
  let redis: Redis;
  let prefix: string;
  let config: Config;
  let ledger: Ledger;
  let dashboard: RunningDashboard | undefined;

  beforeAll(async () => {
    browser = await launchBrowser();
    redis = testRedis();
  });
  afterAll(async () => {
    await browser?.close();
    await redis?.quit();
  });
  beforeEach(async () => {
    ({ prefix, config, ledger } = dashboardLedger(redis, "dashc"));
    await seed(ledger);
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  async function withPage<T>(run: (page: Page) => Promise<T>): Promise<T> {
    const page = await browser.newPage();
    try {
      return await run(page);
    } finally {
      await page.close();
    }
  }

  const state = async () => storedState(await ledger.campaigns.meta(CAMPAIGN));

  it("campaigns page: progress, money, times, and a rate and ETA from two reads, beside the bar", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const url = dashboard.url;
    await withPage(async (page) => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(url);
      const row = page.locator(`tr[data-campaign="${CAMPAIGN}"]`);
      const cells = (await row.locator("td").allInnerTexts()).map((t) => t.trim());
      expect(cells.slice(0, 3)).toEqual([
        CAMPAIGN,
        "running",
        "3 of 5 rows done: 1 completed, 2 failed, 0 cancelled",
      ]);
      // The budget on a line of its own, so that an amount never wraps inside.
      expect(cells[12]).toBe("USD 10.00 / 50.00\nbudget 100.00");
      expect(cells[13]).toMatch(/^created \d\d-\d\d \d\d:\d\d$/);
      expect(await row.locator("td.times time").getAttribute("title")).toMatch(
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
      );
      // One read so far: no rate yet.
      expect(await row.locator(".speed").count()).toBe(0);
      // A row completes; the page's own update (every 5 s) reads again.
      await ledger.orders.transition({
        campaign: CAMPAIGN,
        number: 4,
        from: ["queued"],
        to: "completed",
        patch: { order_id: "O-2" },
      });
      await expect
        .poll(async () => row.locator(".meter .speed").textContent(), { timeout: 15_000 })
        .toMatch(/^\d+(\.\d)?\/min · ETA \d+ (s|min)$/);
      expect(await row.locator("td.progress .done").textContent()).toBe(
        "4 of 5 rows done: 2 completed, 2 failed, 0 cancelled",
      );
      await page.screenshot({ path: `${ARTIFACTS}dashboard-campaigns-live.png`, fullPage: true });
      expect(
        await page.evaluate<number>("document.documentElement.scrollWidth"),
      ).toBeLessThanOrEqual(1280);
    });
  });

  it("campaign page: failed_final and failed_uncertain rows, e-mails masked, escaped", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const url = dashboard.url;
    await withPage(async (page) => {
      await page.goto(url);
      await page.getByRole("link", { name: CAMPAIGN }).click();
      await page.waitForURL(`${url}campaigns/${CAMPAIGN}`);
      const rows = page.locator("table.failures tbody tr");
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(0).locator("td").allInnerTexts()).toEqual([
        "3",
        HOSTILE_REFERENCE,
        "u***@example.com",
        "P1",
        "10 USD",
        "failed_final",
        "validation_error",
        "distribution_method.email_address j***@example.com is not valid",
      ]);
      expect(await rows.nth(1).locator("td").allInnerTexts()).toEqual([
        "4",
        "",
        "u***@example.com",
        "P1",
        "10 USD",
        "failed_uncertain",
        "timeout",
        "no answer after 8 attempts",
      ]);
      const html = await page.content();
      expect(html).not.toMatch(/u\d@example\.com|jane\.doe/);
      expect(
        await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      // Read-only: no buttons.
      expect(await page.locator("form").count()).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-campaign.png`, fullPage: true });

      await page.getByRole("link", { name: /^failed_uncertain/ }).click();
      expect(await rows.count()).toBe(1);
    });
  });

  it("campaign page: 100 rows a page", async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `m${i}`);
    await ledger.campaigns.register("many", { execution_mode: "sync" });
    await ledger.orders.record("many", oneRowOrders("many", ids));
    for (const i of ids.keys())
      await ledger.orders.transition({
        campaign: "many",
        number: i + 1,
        from: ["queued"],
        to: "failed_final",
        patch: { error_type: "validation_error" },
      });
    dashboard = await startDashboard({ config, port: 0 });
    const url = dashboard.url;
    await withPage(async (page) => {
      await page.goto(`${url}campaigns/many`);
      const lines = page.locator("table.failures tbody tr td:first-child");
      expect(await lines.count()).toBe(100);
      expect(await lines.first().textContent()).toBe("2");
      expect(await page.locator(".pager").textContent()).toBe("page 1 of 2 (150 rows) next");
      await page.getByRole("link", { name: "next" }).click();
      await page.waitForURL(/page=2$/);
      expect(await lines.count()).toBe(50);
      expect(await lines.first().textContent()).toBe("102");
      expect(await lines.last().textContent()).toBe("151");
    });
  });

  it("answers 404 for an unknown or invalid campaign name", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    for (const name of ["no-such", "..%2Fetc", "a%20b"]) {
      const res = await fetch(`${dashboard.url}campaigns/${name}`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain("No campaign is named");
      expect((await fetch(`${dashboard.url}campaigns/${name}/report.csv`)).status).toBe(404);
    }
  });

  it("serves the report: what `orders report` writes, as an attachment", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const res = await fetch(`${dashboard.url}campaigns/${CAMPAIGN}/report.csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename=${CAMPAIGN}-report.csv`,
    );
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    const file = join(await tmpDir("dash-report"), "report.csv");
    await writeReport(ledger, CAMPAIGN, file);
    const expected = await readFile(file, "utf8");
    expect(await res.text()).toBe(expected);
    expect(expected.split("\n").length).toBe(7);

    // And through the page's link, as a download.
    const url = dashboard.url;
    await withPage(async (page) => {
      await page.goto(`${url}campaigns/${CAMPAIGN}`);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: "Download report (CSV)" }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${CAMPAIGN}-report.csv`);
      expect(await readFile((await download.path())!, "utf8")).toBe(expected);
    });
  });

  it("without --allow-actions: no button, and the POST is refused", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const res = await fetch(`${dashboard.url}campaigns/${CAMPAIGN}/actions/pause`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "csrf=x&confirmed=yes",
    });
    expect(res.status).toBe(403);
    expect(await state()).toBe("running");
  });

  it("with --allow-actions: pause, then resume, through the page", async () => {
    dashboard = await startDashboard({ config, port: 0, allowActions: true });
    const url = dashboard.url;
    await withPage(async (page) => {
      const dialogs: string[] = [];
      let accept = false;
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      });
      await page.goto(`${url}campaigns/${CAMPAIGN}`);
      expect(await page.locator(".actions button").allInnerTexts()).toEqual([
        "Pause",
        "Retry failed_uncertain (same key)",
        "Cancel campaign",
      ]);

      // Dismissed: nothing happens.
      await page.getByRole("button", { name: "Pause" }).click();
      expect(dialogs).toEqual([
        `Pause campaign ${CAMPAIGN}? Nothing more is sent until it is resumed.`,
      ]);
      expect(await state()).toBe("running");

      accept = true;
      await Promise.all([
        page.waitForLoadState("load"),
        page.getByRole("button", { name: "Pause" }).click(),
      ]);
      await page.getByRole("status").waitFor();
      expect(await page.getByRole("status").textContent()).toBe(`campaign ${CAMPAIGN} paused`);
      expect(await state()).toBe("paused");
      expect((await ledger.campaigns.meta(CAMPAIGN)).paused_reason).toBe("paused by operator");
      await page.screenshot({ path: `${ARTIFACTS}dashboard-campaign-paused.png`, fullPage: true });

      await page.getByRole("button", { name: "Resume" }).click();
      await page.getByRole("status").filter({ hasText: "resumed" }).waitFor();
      expect(await page.getByRole("status").textContent()).toBe(`campaign ${CAMPAIGN} resumed`);
      expect(await state()).toBe("running");
      expect(dialogs).toHaveLength(3);
    });
  });

  it("with --allow-actions: refuses a POST without the token, asks before one unconfirmed", async () => {
    dashboard = await startDashboard({ config, port: 0, allowActions: true });
    const post = (action: string, body: string) =>
      fetch(`${dashboard!.url}campaigns/${CAMPAIGN}/actions/${action}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
      });
    expect((await post("pause", "confirmed=yes")).status).toBe(403);
    expect((await post("pause", "csrf=forged&confirmed=yes")).status).toBe(403);
    expect(await state()).toBe("running");

    const html = await (await fetch(`${dashboard.url}campaigns/${CAMPAIGN}`)).text();
    const token = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const csrf = `csrf=${encodeURIComponent(token)}`;

    // No confirmation: a page that asks, nothing done.
    const asked = await post("cancel", csrf);
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain("FOR GOOD?");
    expect(await state()).toBe("running");

    // The function's refusal, as one line.
    const approve = await post("approve", `${csrf}&confirmed=yes`);
    expect(approve.status).toBe(409);
    expect(await approve.text()).toContain(
      `approve failed: campaign ${CAMPAIGN} is running: only a held campaign can be approved`,
    );

    // Retry (same key): the failed_uncertain row is queued again.
    const retry = await post("retry", `${csrf}&confirmed=yes`);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toContain("1 row in 1 order re-queued (same-key)");
    expect((await ledger.orders.getOrder(CAMPAIGN, 3))?.status).toBe("queued");

    expect((await post("obliterate", `${csrf}&confirmed=yes`)).status).toBe(404);
    expect((await post("pause", `${csrf}&confirmed=yes`)).status).toBe(200);
    expect(await state()).toBe("paused");
  });

  it("Resume refuses a campaign the daily limit paused today, as orders resume does", async () => {
    const day = limitDay(new Date(), "UTC");
    const reached = { currency: "USD", spent: 90_00n, limit: 100_00n, price: 20_00n, day };
    await pauseCampaign(ledger, CAMPAIGN, limitReason(reached, "UTC"));
    const limited = (limit: string) =>
      loadConfig({
        env: {
          GIFTJOBS_API_URL: "http://127.0.0.1:9",
          GIFTJOBS_REDIS_URL: REDIS_URL,
          GIFTJOBS_PREFIX: prefix,
          GIFTJOBS_DAILY_LIMIT: limit,
          GIFTJOBS_LIMIT_TZ: "UTC",
        },
      });
    const resume = async (limit: string) => {
      dashboard = await startDashboard({ config: limited(limit), port: 0, allowActions: true });
      const html = await (await fetch(`${dashboard.url}campaigns/${CAMPAIGN}`)).text();
      const token = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      const res = await fetch(`${dashboard.url}campaigns/${CAMPAIGN}/actions/resume`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `csrf=${encodeURIComponent(token)}&confirmed=yes`,
      });
      await dashboard.close();
      dashboard = undefined;
      return { status: res.status, text: await res.text() };
    };

    const refused = await resume("USD:100");
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(
      `resume failed: campaign ${CAMPAIGN} was paused by the USD daily limit of 100.00 USD today (${day}, UTC)`,
    );
    expect(await state()).toBe("paused");

    // A raised limit lets it run again.
    expect((await resume("USD:150")).status).toBe(200);
    expect(await state()).toBe("running");
  });
});
