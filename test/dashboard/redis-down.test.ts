import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { commandClient, connectRedis } from "../../src/redis/connection.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { uniquePrefix } from "../helpers/redis.js";
import { startRedisServer } from "../helpers/redis-server.js";
import { eventually } from "../helpers/wait-for.js";

/** Generous: a page of a dashboard whose Redis is gone answers in about a second. */
const WITHIN_MS = 10_000;

/** A GET, and how long it took to answer. */
async function timedGet(url: string) {
  const started = Date.now();
  const res = await fetch(url);
  const body = await res.text();
  return {
    status: res.status,
    body,
    ms: Date.now() - started,
    type: res.headers.get("content-type"),
  };
}

describe("the dashboard while Redis does not answer", () => {
  let dashboard: RunningDashboard | undefined;
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  it("answers every page at once with a 503 that says so, and works again once Redis is back", async () => {
    // Append-only: the campaign is still there after the restart.
    const server = await startRedisServer({ args: ["--appendonly", "yes"] });
    const prefix = uniquePrefix("dash-down");
    const seed = connectRedis(server.url);
    const ledger = new Ledger(commandClient(seed), prefix);
    await ledger.campaigns.register("c1", { execution_mode: "async" });
    await ledger.orders.record("c1", oneRowOrders("c1", ["a", "b"]));
    await seed.quit();
    const config = loadConfig({
      env: {
        GIFTJOBS_API_URL: "http://127.0.0.1:9",
        GIFTJOBS_REDIS_URL: `redis://127.0.0.1:${server.port}`,
        GIFTJOBS_PREFIX: prefix,
      },
    });
    dashboard = await startDashboard({ config, port: 0 });
    const url = dashboard.url;
    expect((await timedGet(`${url}campaigns/c1`)).status).toBe(200);

    // Connected but frozen: the page still answers, in about REDIS_ANSWER_MS.
    const line = `Redis at 127.0.0.1:${server.port} does not answer: is it running? (GIFTJOBS_REDIS_URL)`;
    server.child()!.kill("SIGSTOP");
    try {
      const frozen = await timedGet(`${url}campaigns/c1`);
      expect(frozen.status).toBe(503);
      expect(frozen.ms).toBeLessThan(WITHIN_MS);
      expect(frozen.body).toContain(line);
    } finally {
      server.child()!.kill("SIGCONT");
    }
    await eventually(
      async () => (await timedGet(`${url}campaigns/c1`)).status === 200,
      "the campaign page once Redis runs again",
      20_000,
    );

    await server.stop();
    for (const path of ["", "campaigns", "campaigns/c1", "campaigns/c1/report.csv", "queues/"]) {
      const page = await timedGet(`${url}${path}`);
      expect(page.status, path).toBe(503);
      expect(page.ms, path).toBeLessThan(WITHIN_MS);
      expect(page.type, path).toMatch(/^text\/html/);
      expect(page.body, path).toContain(line);
      expect(page.body, path).not.toContain("maxRetriesPerRequest");
    }
    for (const path of ["campaigns.json", "queues/api/queues"]) {
      const answer = await timedGet(`${url}${path}`);
      expect(answer.status, path).toBe(503);
      expect(answer.ms, path).toBeLessThan(WITHIN_MS);
      expect(JSON.parse(answer.body), path).toEqual({ error: line });
    }

    await server.restart();
    await eventually(
      async () => (await timedGet(`${url}campaigns/c1`)).status === 200,
      "the campaign page once Redis is back",
      20_000,
    );
  }, 60_000);
});
