import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type RunningMetrics, startMetrics } from "../../src/metrics/start-metrics.js";
import { type CampaignEnv, depsOf, quietLog } from "../helpers/campaign-env.js";
import { startRedisServer } from "../helpers/redis-server.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const FAST = { firstPollDelayMs: 50, pollDelayMs: 50, rateLimitBaseMs: 300 };
const ZERO_BALANCES = { USD: "0.00", EUR: "0.00", GBP: "0.00", CAD: "0.00", JPY: "0" };

/** `name{labels} value` lines of the Prometheus text format, keyed by `name{labels}`. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe("worker metrics", () => {
  const envs = useCampaignEnv();
  let metrics: RunningMetrics | undefined;
  // Runs before useCampaignEnv's afterEach (stack order): workers, then metrics, then the env.
  afterEach(async () => {
    await envs.stopWorkers();
    await metrics?.close();
    metrics = undefined;
  });

  async function run(e: CampaignEnv, rows: number, balanceCheck = true) {
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows, products: 2 }));
    const deps = depsOf(e);
    await importCampaign({ file, campaign: "m", balanceCheck }, { ...deps, log: quietLog });
    metrics = await startMetrics({ config: e.config, port: 0 });
    await envs.work(e, { concurrency: 3, timings: FAST, hooks: metrics.hooks });
  }

  async function scrape(): Promise<Map<string, number>> {
    // Prometheus's default scrape timeout.
    const res = await fetch(metrics!.url, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    return samples(await res.text());
  }

  it("counts outcomes, requests by folded route, latency and queue depths", async () => {
    const env = await envs.setup("metrics", { asyncCompleteMs: 50 });
    await run(env, 5);
    const e = env;
    await eventually(async () => (await campaignStatus(e.ledger, "m")).completed === 5, "done");

    const m = await scrape();
    expect(m.get('giftjobs_order_attempts_total{outcome="submitted"}')).toBe(5);
    expect(m.get('giftjobs_order_attempts_total{outcome="key_conflict"}')).toBe(0);
    // Async orders are counted once, when the follower sees them end.
    expect(m.get('giftjobs_orders_total{outcome="completed"}')).toBe(5);
    expect(m.get('giftjobs_orders_total{outcome="failed_uncertain"}')).toBe(0);
    expect(
      m.get('giftjobs_http_requests_total{method="POST",route="/v2/order",status="202"}'),
    ).toBe(5);
    // Polls of five different orders fold into one series.
    const polls = [...m.keys()].filter((k) => k.includes('route="/v2/order/'));
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.filter((k) => !k.includes('route="/v2/order/{id}"'))).toEqual([]);
    expect(
      m.get('giftjobs_http_request_duration_seconds_count{method="POST",route="/v2/order"}'),
    ).toBe(5);
    expect(m.has("giftjobs_http_rate_limited_total")).toBe(false);
    expect(m.get("giftjobs_campaign_pauses_total")).toBe(0);
    expect(m.get("giftjobs_dispatch_window")).toBeGreaterThanOrEqual(4);
    expect(m.get('giftjobs_campaign_state{campaign="m",state="done"}')).toBe(1);
    // Default process and Node.js metrics, under their usual names.
    expect(m.has("process_cpu_user_seconds_total")).toBe(true);
    expect(m.has("nodejs_heap_size_used_bytes")).toBe(true);
    for (const queue of ["orders", "catalog"])
      expect(m.has(`giftjobs_queue_jobs{queue="${queue}",state="waiting"}`)).toBe(true);
    expect(m.get('giftjobs_queue_jobs{queue="orders",state="active"}')).toBe(0);
    expect(m.get('giftjobs_campaign_rows{campaign="m",status="completed"}')).toBe(5);
    expect(m.get('giftjobs_campaign_rows{campaign="m",status="cancelled"}')).toBe(0);
    expect(m.get('giftjobs_campaigns{state="done"}')).toBe(1);

    const other = await fetch(metrics!.url.replace("/metrics", "/elsewhere"));
    expect(other.status).toBe(404);
  });

  it("after async orders and 5xx faults, the end counts equal the ledger's; spend per currency", async () => {
    const env = await envs.setup("metricsledger", { asyncCompleteMs: 30, failRate: 0.3 });
    const e = env;
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 30, products: 3 }));
    await importCampaign(
      {
        file,
        campaign: "m",
        // Few attempts, quick backoff: some orders end failed_uncertain, most completed.
        jobOptions: { attempts: 2, backoff: { type: "fixed", delay: 20 } },
      },
      { ...depsOf(e), log: quietLog },
    );
    metrics = await startMetrics({ config: e.config, port: 0 });
    await envs.work(e, { timings: { ...FAST, dispatchTickMs: 20 }, hooks: metrics.hooks });
    const done = async () => {
      const s = await campaignStatus(e.ledger, "m");
      return s.queued + s.in_flight + s.submitted === 0;
    };
    await eventually(done, "every row at an end", 60_000);
    const status = await campaignStatus(e.ledger, "m");
    const m = await scrape();
    expect(
      m.get('giftjobs_http_requests_total{method="POST",route="/v2/order",status="500"}'),
    ).toBeGreaterThan(0);
    for (const outcome of ["completed", "failed_final", "failed_uncertain", "cancelled"] as const)
      expect(m.get(`giftjobs_orders_total{outcome="${outcome}"}`), outcome).toBe(status[outcome]);
    expect(status.completed).toBeGreaterThan(0);
    // Spend in major units, exactly the ledger's minor units.
    const meta = await e.ledger.campaigns.meta("m");
    const spent = [...m.entries()].filter(([k]) =>
      k.startsWith('giftjobs_campaign_spent{campaign="m"'),
    );
    expect(spent.length).toBeGreaterThan(0);
    for (const [k, v] of spent) {
      const currency = /currency="([A-Z]{3})"/.exec(k)![1]!;
      const minor = (meta as Record<string, string | undefined>)[`spent:${currency}`] ?? "0";
      const decimals = currency === "JPY" ? 0 : 2;
      expect(v.toFixed(decimals)).toBe(minorToMajor(minor, decimals));
    }
  }, 90_000);

  it("counts campaigns by state and a cancelled campaign's rows", async () => {
    const env = await envs.setup("states");
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 4 }));
    const deps = { ...depsOf(env), log: quietLog };
    await importCampaign({ file, campaign: "kept", hold: true }, deps);
    // The same rows as kept's: paid again, knowingly (docs/architecture/repeats.md).
    await importCampaign({ file, campaign: "gone", allowRepeats: true }, deps);
    await cancelCampaign(env.ledger, "gone");
    metrics = await startMetrics({ config: env.config, port: 0 });
    const m = await scrape();
    expect(m.get('giftjobs_campaigns{state="held"}')).toBe(1);
    expect(m.get('giftjobs_campaigns{state="cancelled"}')).toBe(1);
    expect(m.get('giftjobs_campaign_rows{campaign="gone",status="cancelled"}')).toBe(4);
    expect(m.get('giftjobs_campaign_rows{campaign="kept",status="queued"}')).toBe(4);
    // Cancelled by the command, not a worker: the ledger counted them, this endpoint claimed them.
    expect(m.get('giftjobs_orders_total{outcome="cancelled"}')).toBe(4);
    // Once: a second endpoint, and this one's next scrape, do not count them again.
    const other = await startMetrics({ config: env.config, port: 0 });
    try {
      const text = await (await fetch(other.url)).text();
      expect(text).toContain('giftjobs_orders_total{outcome="cancelled"} 0');
    } finally {
      await other.close();
    }
    expect((await scrape()).get('giftjobs_orders_total{outcome="cancelled"}')).toBe(4);
    // A later cancel is counted on top.
    await importCampaign({ file, campaign: "gone-too", allowRepeats: true }, deps);
    await cancelCampaign(env.ledger, "gone-too");
    expect((await scrape()).get('giftjobs_orders_total{outcome="cancelled"}')).toBe(8);
  });

  it("queue depth is read at scrape time", async () => {
    const env = await envs.setup("depth");
    await env.queue.add("order-create", {} as never, { delay: 60_000 });
    metrics = await startMetrics({ config: env.config, port: 0 });
    const m = await scrape();
    expect(m.get('giftjobs_queue_jobs{queue="orders",state="delayed"}')).toBe(1);
    // Redis answered: up (the outage test scrapes it while Redis is away).
    expect(m.get("giftjobs_redis_up")).toBe(1);
  });

  it("a Redis that takes commands but never answers (frozen): a scrape answers all the same, Redis down, without the gauges it reads", async () => {
    const env = await envs.setup("frozen");
    const server = await startRedisServer();
    const config = { ...env.config, redisUrl: server.url };
    metrics = await startMetrics({ config, port: 0 });
    const fromRedis = (m: Map<string, number>) =>
      [...m.keys()].filter((k) => /^giftjobs_(queue_jobs|followed_orders|campaigns)\b/.test(k));
    expect((await scrape()).get("giftjobs_redis_up")).toBe(1);
    // SIGSTOP: the connection stays up and takes commands, nothing answers (a stalled host, a
    // Redis busy in a long script). Without an offline queue to fail fast, only a deadline helps.
    server.child()!.kill("SIGSTOP");
    try {
      const m = await scrape();
      expect(m.get("giftjobs_redis_up")).toBe(0);
      expect(fromRedis(m)).toEqual([]);
      expect(m.has('giftjobs_orders_total{outcome="completed"}')).toBe(true);
    } finally {
      server.child()!.kill("SIGCONT");
    }
    await eventually(async () => (await scrape()).get("giftjobs_redis_up") === 1, "up again");
    expect(fromRedis(await scrape())).toContain(
      'giftjobs_queue_jobs{queue="orders",state="waiting"}',
    );
  });

  it("reads the follow set at scrape time: followed orders, and those over a minute late", async () => {
    const env = await envs.setup("follow");
    metrics = await startMetrics({ config: env.config, port: 0 });
    let m = await scrape();
    expect(m.get("giftjobs_followed_orders")).toBe(0);
    expect(m.get("giftjobs_followed_orders_overdue")).toBe(0);

    const now = Date.now();
    await env.ledger.follows.add("c", 1, now);
    await env.ledger.follows.add("c", 2, now - 61_000);
    await env.ledger.follows.add("c", 3, now + 5_000);
    m = await scrape();
    expect(m.get("giftjobs_followed_orders")).toBe(3);
    expect(m.get("giftjobs_followed_orders_overdue")).toBe(1);

    await env.ledger.follows.remove("c", 2);
    m = await scrape();
    expect(m.get("giftjobs_followed_orders")).toBe(2);
    expect(m.get("giftjobs_followed_orders_overdue")).toBe(0);
  });

  it("counts 429s and rate-limited outcomes", async () => {
    const env = await envs.setup("metrics429", { orderRateLimit: 2 });
    await run(env, 4);
    const e = env;
    const r429 = 'giftjobs_http_requests_total{method="POST",route="/v2/order",status="429"}';
    await eventually(async () => ((await scrape()).get(r429) ?? 0) > 0, "a 429");
    e.sandbox.setFaults({ orderRateLimit: 1000 });
    await eventually(async () => (await campaignStatus(e.ledger, "m")).completed === 4, "done");
    const m = await scrape();
    // One counter for 429s: the request counter's status label; a 429 is no attempt.
    expect(m.get(r429)).toBeGreaterThan(0);
    expect([...m.keys()].some((k) => k.includes("rate_limited"))).toBe(false);
    expect(m.get('giftjobs_orders_total{outcome="completed"}')).toBe(4);
  });

  it("counts a campaign pause once, and its systemic outcomes", async () => {
    const env = await envs.setup("metricspause", { balances: ZERO_BALANCES });
    await run(env, 3, false);
    const e = env;
    await eventually(async () => (await campaignStatus(e.ledger, "m")).paused !== null, "paused");
    const m = await scrape();
    expect(m.get("giftjobs_campaign_pauses_total")).toBe(1);
    expect(m.get('giftjobs_order_attempts_total{outcome="systemic"}')).toBeGreaterThan(0);
  });
});

/** "12345" minor units, 2 decimals -> "123.45" (strings only, as a check independent of money.ts). */
function minorToMajor(minor: string, decimals: number): string {
  if (decimals === 0) return minor;
  const padded = minor.padStart(decimals + 1, "0");
  return `${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`;
}
