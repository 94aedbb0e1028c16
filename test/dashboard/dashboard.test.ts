import { request as httpRequest } from "node:http";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OrderJobData, orderJobId } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { pauseIfRunning } from "../../src/campaigns/control.js";
import { type Config, loadConfig } from "../../src/config.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ARTIFACTS, launchBrowser } from "../helpers/browser.js";
import { type CliChild, finished, spawnCli } from "../helpers/cli.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { eventually } from "../helpers/wait-for.js";

const HOSTILE_REASON = `insufficient_funds: <script>window.__pwned = 1</script> & "more"`;

/** Orders without money, as recorded before prices were kept. */
const NO_MONEY = () => ({ currency: undefined, face: undefined, price: undefined });

/** Two campaigns: `spring-gifts` (3 rows, 1 completed) and `paused-one` (paused, hostile reason). */
async function seed(ledger: Ledger): Promise<void> {
  await ledger.campaigns.register("spring-gifts", { execution_mode: "async" });
  await ledger.orders.record(
    "spring-gifts",
    oneRowOrders("spring-gifts", ["a", "b", "c"], { order: NO_MONEY }),
  );
  await ledger.orders.transition({
    campaign: "spring-gifts",
    number: 1,
    from: ["queued"],
    to: "completed",
    patch: { order_id: "O-1" },
  });
  await ledger.campaigns.register("paused-one", { execution_mode: "sync" });
  await ledger.orders.record("paused-one", oneRowOrders("paused-one", ["d"], { order: NO_MONEY }));
  await pauseIfRunning(ledger, "paused-one", HOSTILE_REASON);
}

function orderJob(order: number): OrderJobData {
  return {
    campaign: "spring-gifts",
    order,
    executionMode: "async",
  };
}

/** What bull-board tells its page about the orders queue's actions. */
async function queueFlags(url: string) {
  const body = (await (await fetch(`${url}queues/api/queues`)).json()) as {
    queues: { name: string; readOnlyMode: boolean; allowRetries: boolean }[];
  };
  const orders = body.queues.find((q) => q.name === QUEUES.orders);
  return { readOnlyMode: orders?.readOnlyMode, allowRetries: orders?.allowRetries };
}

/** A GET with a Host header of our choosing (fetch does not let one set it). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("giftjobs dashboard", () => {
  let browser: Browser;
  let redis: Redis;
  let prefix: string;
  let config: Config;
  let queue: Queue<OrderJobData>;
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
    prefix = uniquePrefix("dash");
    config = loadConfig({
      env: {
        GIFTJOBS_API_URL: "http://127.0.0.1:9",
        GIFTJOBS_REDIS_URL: REDIS_URL,
        GIFTJOBS_PREFIX: prefix,
      },
    });
    await seed(new Ledger(redis, prefix));
    queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
    await queue.add("order-create", orderJob(2), { jobId: orderJobId("spring-gifts", 2) });
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
    await queue.close();
  });

  it("shows campaigns with their counts, escaping what it shows", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await browser.newPage();
    try {
      await page.goto(dashboard.url);
      const spring = page.locator('tr[data-campaign="spring-gifts"]');
      // campaign, state, progress, total, queued, in flight, submitted, completed,
      // failed_final, failed_uncertain, cancelled, replayed (then money, times, rate, ETA)
      const cells = (await spring.locator("td").allInnerTexts()).map((t) => t.trim());
      expect(cells.slice(0, 12)).toEqual([
        "spring-gifts",
        "running",
        "1 of 3 rows done: 1 completed, 0 failed, 0 cancelled",
        "3",
        "2",
        "0",
        "0",
        "1",
        "0",
        "0",
        "0",
        "0",
      ]);
      // Stalled campaigns first (spring-gifts: running, rows queued, no worker), then paused.
      expect(
        await page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.campaign)),
      ).toEqual(["spring-gifts", "paused-one"]);
      const paused = page.locator("tr", { hasText: "paused-one" });
      // Shown as text, short in the cell and whole in its title, never run.
      expect(await paused.textContent()).toContain("insufficient_funds: <script>window.__pwned =");
      expect(await paused.locator(".reason").getAttribute("title")).toBe(HOSTILE_REASON);
      expect(
        await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(await page.locator("main script").count()).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-campaigns.png`, fullPage: true });
    } finally {
      await page.close();
    }
    const json = (await (await fetch(`${dashboard.url}campaigns.json`)).json()) as {
      campaigns: { campaign: string; total: number; completed: number; paused: unknown }[];
    };
    expect(json.campaigns.map((c) => c.campaign)).toEqual(["spring-gifts", "paused-one"]);
    expect(json.campaigns[0]).toMatchObject({
      total: 3,
      completed: 1,
      paused: null,
      progress: { done: 1, remaining: 2 },
    });
  });

  it("shows the giftjobs queues and their jobs in bull-board, with no e-mail address", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const page = await browser.newPage();
    try {
      await page.goto(`${dashboard.url}queues`);
      for (const name of Object.values(QUEUES))
        await page.getByText(name, { exact: true }).first().waitFor({ timeout: 15_000 });
      await page.getByText("Loading...").waitFor({ state: "hidden", timeout: 15_000 });
      await page.screenshot({ path: `${ARTIFACTS}dashboard-queues.png`, fullPage: true });

      await page.goto(`${dashboard.url}queues/queue/${QUEUES.orders}?status=waiting`);
      await page.getByText(orderJobId("spring-gifts", 2)).first().waitFor({ timeout: 15_000 });
      await page.screenshot({ path: `${ARTIFACTS}dashboard-orders-queue.png`, fullPage: true });
    } finally {
      await page.close();
    }
    const api = await fetch(`${dashboard.url}queues/api/queues?activeQueue=orders&status=waiting`);
    const text = await api.text();
    // Order jobs name their order only: no e-mail address reaches the dashboard at all.
    expect(text).toContain('"order":2');
    expect(text).toContain('"spring-gifts.2"');
    expect(text).not.toMatch(/@example\.com/);
  });

  it("is read-only unless actions are allowed", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const clean = await fetch(`${dashboard.url}queues/api/queues/orders/clean/completed`, {
      method: "PUT",
    });
    expect(clean.status).toBe(405);
    expect(await queueFlags(dashboard.url)).toEqual({ readOnlyMode: true, allowRetries: false });
  });

  it("with --allow-actions: retry and clean of finished jobs only", async () => {
    dashboard = await startDashboard({ config, port: 0, allowActions: true });
    const put = (path: string) =>
      fetch(`${dashboard!.url}queues/api/queues/orders/${path}`, { method: "PUT" });
    expect((await put("clean/completed")).status).toBeLessThan(300);
    expect((await put("retry/failed")).status).toBeLessThan(300);
    // A waiting order job removed would leave its rows queued in the ledger, unsent.
    expect((await put("clean/wait")).status).toBe(403);
    expect((await put("spring-gifts.2/clean")).status).toBe(403);
    expect((await put("obliterate")).status).toBe(403);
    expect((await put("pause")).status).toBe(403);
    expect(await queue.getJobState(orderJobId("spring-gifts", 2))).toBe("waiting");
    expect(await queueFlags(dashboard.url)).toEqual({ readOnlyMode: false, allowRetries: true });
  });

  it("on a loopback bind, refuses requests for another host name (DNS rebinding)", async () => {
    dashboard = await startDashboard({ config, port: 0 });
    const port = new URL(dashboard.url).port;
    expect(await getWithHost(dashboard.url, `localhost:${port}`)).toBe(200);
    expect(await getWithHost(dashboard.url, `attacker.example:${port}`)).toBe(421);
  });
});

describe("giftjobs dashboard (command)", () => {
  let child: CliChild | undefined;
  afterEach(() => {
    if (child?.exitCode === null) child.kill("SIGKILL");
  });

  it("prints its URL, serves, and exits 0 on SIGTERM", async () => {
    child = spawnCli(["dashboard", "--port", "0"], {
      GIFTJOBS_PREFIX: uniquePrefix("dashcli"),
      GIFTJOBS_REDIS_URL: REDIS_URL,
    });
    const proc = child;
    const done = finished(proc);
    const stdout = () => proc.printed().stdout;
    await eventually(
      async () => stdout().includes("\n") || proc.exitCode !== null,
      "the dashboard's first line",
    );
    expect(stdout()).toMatch(/^dashboard on http:\/\/127\.0\.0\.1:\d+\/\n$/);
    const url = stdout().trim().replace("dashboard on ", "");
    expect((await fetch(`${url}campaigns.json`)).status).toBe(200);
    proc.kill("SIGTERM");
    expect((await done).code).toBe(0);
  });
});
