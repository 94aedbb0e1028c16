import { mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { pauseReason } from "../../jobs/orders/pause-reason.js";
import type { ApiClient } from "../../src/api/client.js";
import { UnauthorizedError } from "../../src/api/errors/index.js";
import { cancelCampaign, pauseIfRunning } from "../../src/campaigns/control.js";
import { FOUR_EYES_FIELDS } from "../../src/campaigns/four-eyes.js";
import { WorkerBeats } from "../../src/campaigns/worker-beats.js";
import type { Config } from "../../src/config.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { limitReason } from "../../src/ledger/daily-limit.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { ARTIFACTS, launchBrowser } from "../helpers/browser.js";
import { dashboardLedger } from "../helpers/dashboard-ledger.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { testRedis } from "../helpers/redis.js";

/** A laptop's screen (docs/architecture/operators.md, "The dashboard"). */
const VIEWPORT = { width: 1280, height: 800 };
const SHOTS = `${ARTIFACTS}screenshots/`;

const ids = (label: string, n: number) => Array.from({ length: n }, (_, i) => `${label}${i}`);

/**
 * A campaign's meta as an import registers it: running, a budget of 12.00 USD a row (the rows
 * record their planned price, 10.00 USD each).
 */
function usd(rows: number): Record<string, string> {
  return { state: "running", execution_mode: "sync", "budget:USD": String(rows * 1200) };
}

async function completeRows(ledger: Ledger, campaign: string, from: number, to: number) {
  for (let n = from; n <= to; n++)
    await ledger.orders.transition({
      campaign,
      number: n,
      from: ["queued"],
      to: "completed",
      patch: { order_id: `${campaign}-${n}` },
    });
}

/** The daily limit's pause reason, made by the worker's own function. */
function dailyReason(): string {
  return limitReason(
    { currency: "USD", spent: 249_856n, limit: 250_000n, price: 5_000n, day: "2026-11-28" },
    "Europe/Amsterdam",
  );
}

/** A refused API key's pause reason, made by the worker's own function for a running campaign. */
function keyReason(ledger: Ledger): Promise<string> {
  return pauseReason(
    new UnauthorizedError({
      status: 401,
      type: "unauthorized",
      message: "The API key is not valid for this account, or it was revoked",
    }),
    { campaign: "payroll-key", currency: "USD" },
    // The fix of a refused key reads neither the balance nor the client.
    { client: {} as ApiClient, ledger },
  );
}

/**
 * One campaign in each state, made oldest first: `payroll-november-contractors-eu` and `payroll-key` (paused, the
 * daily limit's reason and a refused API key's), `spring-held` (held by the four-eyes rule,
 * imported by alice), `summer-done` (finished), `autumn-cancelled` (cancelled), and
 * `winter-running` (running, a live worker, 400 rows).
 */
async function seed(ledger: Ledger, redis: Redis, prefix: string) {
  const daily = dailyReason();
  await ledger.campaigns.register("payroll-november-contractors-eu", usd(300));
  await ledger.orders.record(
    "payroll-november-contractors-eu",
    oneRowOrders("payroll-november-contractors-eu", ids("d", 300)),
  );
  await completeRows(ledger, "payroll-november-contractors-eu", 1, 120);
  await pauseIfRunning(ledger, "payroll-november-contractors-eu", daily);

  await ledger.campaigns.register("payroll-key", usd(80));
  await ledger.orders.record("payroll-key", oneRowOrders("payroll-key", ids("k", 80)));
  await completeRows(ledger, "payroll-key", 1, 3);
  const key = await keyReason(ledger);
  await pauseIfRunning(ledger, "payroll-key", key);

  await ledger.campaigns.register("spring-held", usd(56));
  await ledger.orders.record("spring-held", oneRowOrders("spring-held", ids("h", 56)));
  await ledger.campaigns.setState({ campaign: "spring-held", state: "held", from: ["running"] });
  await ledger.campaigns.setMeta("spring-held", {
    [FOUR_EYES_FIELDS.rule]: "USD 560.00 over 500.00",
    [FOUR_EYES_FIELDS.importers]: JSON.stringify(["alice"]),
  });

  await ledger.campaigns.register("summer-done", usd(25));
  await ledger.orders.record("summer-done", oneRowOrders("summer-done", ids("s", 25)));
  await completeRows(ledger, "summer-done", 1, 25);

  await ledger.campaigns.register("autumn-cancelled", usd(40));
  await ledger.orders.record("autumn-cancelled", oneRowOrders("autumn-cancelled", ids("a", 40)));
  await completeRows(ledger, "autumn-cancelled", 1, 7);
  await cancelCampaign(ledger, "autumn-cancelled");

  await ledger.campaigns.register("winter-running", usd(400));
  await ledger.orders.record("winter-running", oneRowOrders("winter-running", ids("w", 400)));
  // A live order worker: the running campaign is running, not stalled.
  const now = new Date().toISOString();
  await new WorkerBeats(redis, prefix).beat(
    {
      id: "test-worker",
      hostname: hostname(),
      pid: process.pid,
      queues: ["orders"],
      started_at: now,
      beat_at: now,
    },
    120_000,
  );
  return { daily, key };
}

/** Nothing scrolls sideways: the page, its `<main>`, and the table inside the window. */
async function assertNoSidewaysScroll(page: Page): Promise<void> {
  // Evaluated in the page (the tests are typed without the DOM's names).
  const sizes = await page.evaluate<{
    page: number[];
    main: number[];
    tableRight: number[];
  }>(`(() => {
    const root = document.documentElement;
    const main = document.querySelector("main");
    const table = document.querySelector("table.campaigns");
    return {
      page: [root.scrollWidth, root.clientWidth],
      main: [main.scrollWidth, main.clientWidth],
      tableRight: [Math.ceil(table.getBoundingClientRect().right), root.clientWidth],
    };
  })()`);
  expect(sizes.page[0], "the page's scrollWidth").toBeLessThanOrEqual(sizes.page[1]!);
  expect(sizes.main[0], "<main>'s scrollWidth").toBeLessThanOrEqual(sizes.main[1]!);
  expect(sizes.tableRight[0], "the table's right edge").toBeLessThanOrEqual(sizes.tableRight[1]!);
}

describe("the campaigns list with a campaign in every state, at 1280x800", () => {
  let browser: Browser;
  let redis: Redis;
  let prefix: string;
  let config: Config;
  let ledger: Ledger;
  let reasonsOf: { daily: string; key: string };
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
    ({ prefix, config, ledger } = dashboardLedger(redis, "dashs"));
    reasonsOf = await seed(ledger, redis, prefix);
    dashboard = await startDashboard({ config, port: 0 });
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  /** The page once the running campaign has a rate and an ETA (two reads 3 s apart). */
  async function loaded(page: Page): Promise<void> {
    await page.goto(dashboard!.url);
    await completeRows(ledger, "winter-running", 1, 30);
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await page.goto(dashboard!.url);
  }

  it("fits the window: no sideways scroll, the running campaign's rate and ETA shown", async () => {
    const page = await browser.newPage({ viewport: VIEWPORT });
    try {
      await loaded(page);
      const order = await page
        .locator("tbody tr")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-campaign")));
      expect(order).toEqual([
        "payroll-november-contractors-eu",
        "payroll-key",
        "winter-running",
        "spring-held",
        "summer-done",
        "autumn-cancelled",
      ]);
      const running = page.locator('tr[data-campaign="winter-running"]');
      expect(await running.locator(".speed").textContent()).toMatch(
        /^\d+(\.\d)?\/min · ETA \d+ (s|min|h \d+ min)$/,
      );
      expect(await running.locator("td.times").textContent()).toMatch(/created/);
      await page.screenshot({ path: `${SHOTS}campaigns-every-state.png`, fullPage: true });
      await assertNoSidewaysScroll(page);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("a paused campaign's reason once, short, its whole text in the title and on its page", async () => {
    const page = await browser.newPage({ viewport: VIEWPORT });
    try {
      await page.goto(dashboard!.url);
      const main = ((await page.locator("main").textContent()) ?? "").replace(/\s+/g, " ");
      // As docs/commands.md and docs/architecture/operators.md show them.
      for (const [campaign, reason, expected] of [
        [
          "payroll-november-contractors-eu",
          reasonsOf.daily,
          "daily_limit: 2498.56 USD of the USD daily limit…",
        ],
        ["payroll-key", reasonsOf.key, "unauthorized: The API key is not valid for this…"],
      ] as const) {
        const shown = page.locator(`tr[data-campaign="${campaign}"] .reason`);
        const short = ((await shown.textContent()) ?? "").replace(/\s+/g, " ");
        expect(short).toBe(expected);
        expect(reason.startsWith(short.slice(0, -1)), short).toBe(true);
        expect(await shown.getAttribute("title")).toBe(reason);
        // Once on the page: not again above the table, nor in another column; the rest of
        // the reason (what to do) is not on the list at all.
        expect(main.split(short.slice(0, -1)).length - 1, short).toBe(1);
        expect(main).not.toContain(reason.slice(short.length + 10));
        expect(await page.locator(`p[data-paused="${campaign}"]`).textContent()).toBe(
          `campaign ${campaign} is paused: its page says why and what to do`,
        );
      }
      expect(reasonsOf.daily).toContain("raise GIFTJOBS_DAILY_LIMIT and restart the workers");
      expect(reasonsOf.key).toContain("then: giftjobs orders resume --campaign payroll-key");
      await page.locator('p[data-paused="payroll-november-contractors-eu"] a').click();
      await page.waitForURL(`${dashboard!.url}campaigns/payroll-november-contractors-eu`);
      expect(await page.locator("dl.summary .paused").textContent()).toBe(reasonsOf.daily);
      expect(
        await page.evaluate<boolean>(
          "document.documentElement.scrollWidth <= document.documentElement.clientWidth",
        ),
        "the campaign's page fits too",
      ).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("a held campaign's row says who may approve it, in the words of its page", async () => {
    const page = await browser.newPage({ viewport: VIEWPORT });
    try {
      await page.goto(dashboard!.url);
      const listed = await page
        .locator('tr[data-campaign="spring-held"] [data-approver]')
        .textContent();
      expect(listed).toBe(
        "a user of the users file with the approve role may approve it, not alice (who imported it)",
      );
      await page.goto(`${dashboard!.url}campaigns/spring-held`);
      expect(await page.locator("[data-four-eyes]").textContent()).toBe(
        `Held by the four-eyes rule (USD 560.00 over 500.00): ${listed}.`,
      );
    } finally {
      await page.close();
    }
  });
});
