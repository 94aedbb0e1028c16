import { mkdir } from "node:fs/promises";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OrderJobData, orderJobId } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { cancelCampaign, pauseIfRunning } from "../../src/campaigns/control.js";
import { type Config, loadConfig } from "../../src/config.js";
import { MinuteHistory } from "../../src/dashboard/minute-history.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { ARTIFACTS, launchBrowser } from "../helpers/browser.js";
import { dashboardLedger } from "../helpers/dashboard-ledger.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { testRedis, uniquePrefix } from "../helpers/redis.js";
import { startRedisServer } from "../helpers/redis-server.js";
import { eventually } from "../helpers/wait-for.js";

/** Screenshots of the pages at a laptop's width, overwritten by each run (gitignored). */
const SHOTS = `${ARTIFACTS}screenshots/`;
const WIDTH = 1280;
/** A reference of one long word: it must wrap, not widen the page. */
const LONG_REFERENCE = `HR-${"X".repeat(300)}`;
const REFUSED = "validation_error: distribution_method.email_address is not valid";

const ids = (label: string, n: number) => Array.from({ length: n }, (_, i) => `${label}${i}`);

/**
 * Made oldest first, so the list's order is the page's own: `done-fails` (30 rows: 25 refused
 * for one reason, 3 failed_uncertain, 2 completed, and 300 minutes of history), `cancelled-c`
 * (10 rows, 3 completed, then cancelled), `wide-money` (held, four currencies of long amounts),
 * `paused-q` (paused, 40 rows), `stuck` (running, 600 rows, no worker: stalled).
 */
async function seed(ledger: Ledger, redis: Redis, prefix: string): Promise<void> {
  await ledger.campaigns.register("done-fails", { execution_mode: "sync" });
  await ledger.orders.record(
    "done-fails",
    oneRowOrders("done-fails", ids("f", 30), {
      row: (i) => (i === 0 ? { reference: LONG_REFERENCE } : {}),
    }),
  );
  for (let n = 1; n <= 25; n++)
    await ledger.orders.transition({
      campaign: "done-fails",
      number: n,
      from: ["queued"],
      to: "failed_final",
      patch: {
        error_type: "validation_error",
        error_message: "distribution_method.email_address is not valid",
      },
    });
  for (let n = 26; n <= 28; n++)
    await ledger.orders.transition({
      campaign: "done-fails",
      number: n,
      from: ["queued"],
      to: "failed_uncertain",
      patch: {
        error_type: "timeout",
        error_message: "no answer after 8 attempts",
      },
    });
  for (let n = 29; n <= 30; n++)
    await ledger.orders.transition({
      campaign: "done-fails",
      number: n,
      from: ["queued"],
      to: "completed",
      patch: { order_id: `O-${n}` },
    });
  // 300 minutes before those: 5 rows each, 1 failed every 10th minute.
  const history = new MinuteHistory(redis, prefix);
  const start = Date.now() - 301 * 60_000;
  const fields: string[] = [];
  for (let m = 0; m < 300; m++) {
    const minute = new Date(start + m * 60_000).toISOString().slice(0, 16);
    fields.push(`c:${minute}`, "5");
    if (m % 10 === 0) fields.push(`f:${minute}`, "1");
  }
  await redis.hset(history.key("done-fails"), ...fields);

  await ledger.campaigns.register("cancelled-c", { execution_mode: "sync" });
  await ledger.orders.record("cancelled-c", oneRowOrders("cancelled-c", ids("c", 10)));
  for (let n = 1; n <= 3; n++)
    await ledger.orders.transition({
      campaign: "cancelled-c",
      number: n,
      from: ["queued"],
      to: "completed",
      patch: { order_id: `C-${n}` },
    });
  await cancelCampaign(ledger, "cancelled-c");

  await ledger.campaigns.register("wide-money", { execution_mode: "sync" });
  await ledger.orders.record("wide-money", oneRowOrders("wide-money", ids("w", 2)));
  await ledger.campaigns.setState({ campaign: "wide-money", state: "held", from: ["running"] });
  const money: Record<string, string> = {};
  for (const currency of ["EUR", "GBP", "JPY", "USD"]) {
    money[`planned_rows:${currency}`] = "2";
    money[`planned_face:${currency}`] = "987654321098765";
    money[`planned_price:${currency}`] = "987654321098765";
    money[`budget:${currency}`] = "999999999999999";
    money[`spent:${currency}`] = "123456789012345";
  }
  await ledger.campaigns.setMeta("wide-money", money);

  await ledger.campaigns.register("paused-q", { execution_mode: "sync" });
  await ledger.orders.record("paused-q", oneRowOrders("paused-q", ids("p", 40)));
  await pauseIfRunning(ledger, "paused-q", "insufficient_funds: top up the USD balance");

  await ledger.campaigns.register("stuck", { execution_mode: "async" });
  await ledger.orders.record("stuck", oneRowOrders("stuck", ids("s", 600)));
}

/** The page fits: nothing scrolls sideways at 1280 px. */
async function assertFits(page: Page, what: string): Promise<void> {
  const width = await page.evaluate<number>("document.documentElement.scrollWidth");
  expect(width, `${what}: scrollWidth`).toBeLessThanOrEqual(WIDTH);
}

describe("the dashboard on a laptop (1280 px)", () => {
  let browser: Browser;
  let redis: Redis;
  let prefix: string;
  let config: Config;
  let ledger: Ledger;
  let queue: Queue<OrderJobData>;
  let dashboard: RunningDashboard | undefined;

  beforeAll(async () => {
    browser = await launchBrowser();
    await mkdir(SHOTS, { recursive: true });
    redis = testRedis();
  });
  afterAll(async () => {
    await browser?.close();
    await redis?.quit();
  });
  beforeEach(async () => {
    ({ prefix, config, ledger } = dashboardLedger(redis, "dashl"));
    await seed(ledger, redis, prefix);
    // BullMQ holds a window's worth of jobs: 8 here, for 640 rows waiting.
    queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
    for (let n = 1; n <= 8; n++)
      await queue.add(
        "order-create",
        { campaign: "stuck", order: n, executionMode: "async" },
        { jobId: orderJobId("stuck", n) },
      );
    dashboard = await startDashboard({ config, port: 0 });
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
    await queue.close();
  });

  async function withPage<T>(run: (page: Page) => Promise<T>): Promise<T> {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 800 } });
    try {
      return await run(page);
    } finally {
      await page.close();
    }
  }

  it("campaigns list: fits, stalled and paused on top, rate beside the bar, cancelled apart", async () => {
    await withPage(async (page) => {
      await page.goto(dashboard!.url);
      const order = await page
        .locator("tbody tr")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-campaign")));
      expect(order).toEqual(["stuck", "paused-q", "wide-money", "done-fails", "cancelled-c"]);
      expect(await page.locator("p[data-stalled]").allInnerTexts()).toEqual([
        "campaign stuck is stalled: no worker is running: start one with `giftjobs worker`",
      ]);
      expect(await page.locator("p[data-paused]").allInnerTexts()).toEqual([
        "campaign paused-q is paused: its page says why and what to do",
      ]);
      // The reason once, in the table (short already, so whole).
      expect(await page.locator('tr[data-campaign="paused-q"] .reason').textContent()).toBe(
        "insufficient_funds: top up the USD balance",
      );
      const cancelled = page.locator('tr[data-campaign="cancelled-c"] td.progress');
      expect(await cancelled.locator(".done").textContent()).toBe(
        "10 of 10 rows done: 3 completed, 0 failed, 7 cancelled",
      );
      // The bar: completed, then cancelled, in their own colours; nothing reads 100%.
      expect(await cancelled.locator(".bar .completed").getAttribute("style")).toBe("width:30.00%");
      expect(await cancelled.locator(".bar .cancelled").count()).toBe(1);
      const done = page.locator('tr[data-campaign="done-fails"] td.progress .done');
      expect(await done.textContent()).toBe(
        "30 of 30 rows done: 2 completed, 28 failed, 0 cancelled",
      );
      // The history: a line in the list.
      expect(await page.locator('tr[data-campaign="done-fails"] svg.spark polyline').count()).toBe(
        1,
      );
      expect(await page.locator('tr[data-campaign="wide-money"] td.money div').count()).toBe(4);
      // A campaign's first ended row brings its sparkline on the next read.
      const pausedSpark = page.locator('tr[data-campaign="paused-q"] svg.spark');
      expect(await pausedSpark.count()).toBe(0);
      await ledger.orders.transition({
        campaign: "paused-q",
        number: 1,
        from: ["queued"],
        to: "completed",
        patch: { order_id: "P-1" },
      });
      await page.reload();
      expect(await pausedSpark.count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}campaigns.png`, fullPage: true });
      await assertFits(page, "campaigns");
    });
  });

  it("campaigns list: each currency's money on one line; updated at a UTC 24-hour time", async () => {
    await withPage(async (page) => {
      await page.goto(dashboard!.url);
      // Per currency line: its code, spent and planned price on one line (the same top), each
      // amount whole; the budget may go to the next line, whole too.
      const lines = await page.locator("td.money div").evaluateAll((divs) =>
        divs.map((div) => {
          const amounts = [...div.querySelectorAll(".amount")].map((a) => a.getClientRects());
          return {
            text: div.textContent,
            campaign: div.closest("tr")?.getAttribute("data-campaign"),
            whole: amounts.every((rects) => rects.length === 1),
            tops: new Set(amounts.slice(0, 2).map((rects) => Math.round(rects[0]!.top))).size,
          };
        }),
      );
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect(line.whole, line.text ?? "").toBe(true);
      // Ordinary amounts: spent and planned price side by side. The 13-digit amounts of
      // wide-money may go one under the other, each whole, so the page still fits.
      const ordinary = lines.filter((line) => line.campaign !== "wide-money");
      expect(ordinary.length).toBeGreaterThan(0);
      for (const line of ordinary) expect(line.tops, line.text ?? "").toBe(1);
      // The note changes at the first update, every few seconds.
      const note = page.locator("#live");
      await eventually(
        async () => (await note.textContent())?.startsWith("updated") === true,
        "the page's first update",
        20_000,
      );
      expect(await page.locator("#live").textContent()).toMatch(/^updated \d\d:\d\d:\d\d UTC$/);
    });
  });

  it("campaign page: fits, a chart of rows per minute, failures grouped with the next command", async () => {
    await withPage(async (page) => {
      await page.goto(`${dashboard!.url}campaigns/done-fails`);
      const chart = page.locator("figure.chart svg");
      const bars = await chart.locator("rect.completed").count();
      // 300+ minutes in at most 120 bars (the chart's points) of 3 minutes.
      expect(bars).toBeGreaterThan(90);
      expect(bars).toBeLessThanOrEqual(120);
      expect(await chart.locator("rect.failed").count()).toBeGreaterThan(0);
      expect(await page.locator("figure.chart figcaption").textContent()).toMatch(
        /^Rows per minute: peak \d+(\.\d)?, each bar 3 minutes \(UTC; completed, failed\)$/,
      );
      expect(await page.locator("dd.done").textContent()).toBe(
        "30 of 30 rows done: 2 completed, 28 failed, 0 cancelled",
      );
      const groups = page.locator("table.groups tbody tr");
      expect(await groups.count()).toBe(2);
      expect(await groups.nth(0).locator("td").allInnerTexts()).toEqual([
        "25",
        "failed_final",
        REFUSED,
        "lines 2, 3, 4, 5, 6 and 20 more",
        "giftjobs orders retry --campaign done-fails --new-key once the cause is fixed (no order was made; a row refused for its data is refused again)",
      ]);
      expect(await groups.nth(1).locator("td").allInnerTexts()).toEqual([
        "3",
        "failed_uncertain",
        "timeout: no answer after 8 attempts",
        "lines 27, 28, 29",
        "giftjobs orders reconcile --campaign done-fails, then giftjobs orders retry --campaign done-fails (an order may exist: the same key)",
      ]);
      expect(await page.locator("table.failures").textContent()).toContain(LONG_REFERENCE);
      await page.screenshot({ path: `${SHOTS}campaign.png`, fullPage: true });
      await assertFits(page, "campaign page");
      // Filtered to one status, the groups are of that status only.
      await page.goto(`${dashboard!.url}campaigns/done-fails?status=failed_uncertain`);
      expect(await page.locator("table.groups tbody tr").count()).toBe(1);
    });
  });

  it("campaign page of a campaign with no row ended yet: no chart, a line saying why", async () => {
    await withPage(async (page) => {
      await page.goto(`${dashboard!.url}campaigns/stuck`);
      expect(await page.locator("figure.chart").count()).toBe(0);
      expect(await page.locator(".chart-empty").textContent()).toContain("No row has ended yet");
      await assertFits(page, "stalled campaign page");
    });
  });

  it("queue board: rows waiting per campaign beside the jobs, and a link back to the campaigns", async () => {
    const line =
      "642 rows to send in 3 campaigns: stuck 600 queued (running); paused-q 40 queued (paused); wide-money 2 queued (held)";
    await withPage(async (page) => {
      await page.goto(`${dashboard!.url}queues`);
      await page.getByText(QUEUES.orders, { exact: true }).first().waitFor({ timeout: 15_000 });
      await page.getByText("Loading...").waitFor({ state: "hidden", timeout: 15_000 });
      expect(await page.locator("#giftjobs-rows .waiting").textContent()).toBe(line);
      await page.screenshot({ path: `${SHOTS}queues.png`, fullPage: true });
      await assertFits(page, "queue board");
      await page.goto(`${dashboard!.url}queues/queue/${QUEUES.orders}?status=waiting`);
      // The queue's page: its jobs, and under its name the description bull-board polls.
      await page.getByText(orderJobId("stuck", 8)).first().waitFor({ timeout: 15_000 });
      await page.locator("p", { hasText: line }).first().waitFor({ timeout: 15_000 });
      // The window only: a full-page capture would draw the fixed banner mid-page.
      await page.screenshot({ path: `${SHOTS}queue-orders.png` });
      await page.locator("#giftjobs-rows").getByRole("link", { name: "stuck" }).click();
      await page.waitForURL(`${dashboard!.url}campaigns/stuck`);
      await page.goBack();
      await page.locator("#giftjobs-rows").getByRole("link", { name: "← Campaigns" }).click();
      await page.waitForURL(`${dashboard!.url}campaigns`);
    });
    // The queue's own answer carries the line too, as its description (bull-board polls it).
    const api = (await (await fetch(`${dashboard!.url}queues/api/queues`)).json()) as {
      queues: { name: string; description?: string }[];
    };
    expect(api.queues.find((q) => q.name === QUEUES.orders)?.description).toBe(line);
  });
});

describe("the dashboard's Redis-down page on a laptop", () => {
  let dashboard: RunningDashboard | undefined;
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  it("fits 1280 px and says what is wrong", async () => {
    const server = await startRedisServer();
    const config = loadConfig({
      env: {
        GIFTJOBS_API_URL: "http://127.0.0.1:9",
        GIFTJOBS_REDIS_URL: server.url,
        GIFTJOBS_PREFIX: uniquePrefix("dashl-down"),
      },
    });
    dashboard = await startDashboard({ config, port: 0 });
    await server.stop();
    const browser = await launchBrowser();
    try {
      await mkdir(SHOTS, { recursive: true });
      const page = await browser.newPage({ viewport: { width: WIDTH, height: 800 } });
      await eventually(
        async () => (await page.goto(dashboard!.url))?.status() === 503,
        "the 503 page",
        10_000,
      );
      expect(await page.locator("main").textContent()).toContain(
        `Redis at ${server.address} does not answer: is it running? (GIFTJOBS_REDIS_URL)`,
      );
      await page.screenshot({ path: `${SHOTS}redis-down.png`, fullPage: true });
      await assertFits(page, "Redis down");
    } finally {
      await browser.close();
    }
  }, 60_000);
});
