import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import {
  type CliChild,
  exited,
  finished as finishedRun,
  runCli,
  spawnCli,
} from "../helpers/cli.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { freePort } from "../helpers/free-port.js";
import {
  onConnectionTo,
  type RedisServer,
  redisAt,
  startRedisServer,
} from "../helpers/redis-server.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const ROWS = 200;
const CAMPAIGN = "outage";
/** The workers' job lock (`--lock-duration`): short, so an outage can outlast it in seconds. */
const LOCK_MS = 1500;
/**
 * Twice the lock: the locks of the jobs in flight run out during the outage, and they are taken
 * over as stalled after it (docs/architecture/redis.md, "Redis outages"). Past the first second
 * too, after which the worker says it waits (src/redis/outage-reporter.ts); its line every 5 s
 * is counted in test/redis/outage-reporter.test.ts.
 */
const OUTAGE_MS = 2 * LOCK_MS;

/** A persistent Redis of the test's own, a sandbox, a synced catalog and a file of ROWS rows. */
interface Setup {
  server: RedisServer;
  sandbox: Sandbox;
  env: Record<string, string>;
  file: string;
}

/** Connections of giftjobs processes to `server`. */
async function giftjobsClients(server: RedisServer): Promise<number> {
  const list = String(await redisAt(server.port, "CLIENT", "LIST"));
  return list.split("\n").filter((line) => line.includes("name=giftjobs")).length;
}

/** giftjobs_redis_up as the worker's /metrics says it (a scrape must answer within 5 s). */
async function redisUp(port: number): Promise<string | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  return /^giftjobs_redis_up (\d)$/m.exec(await res.text())?.[1];
}

describe("Redis going away is an outage, never a loss", () => {
  const children: CliChild[] = [];
  let sandbox: Sandbox | undefined;
  let step = "";

  afterEach(async (context) => {
    if (context.task.result?.state === "fail") {
      console.error(`--- failed while: ${step}`);
      for (const child of children)
        console.error(`--- child ${child.pid}\n${child.output().slice(-4000)}`);
    }
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(children.splice(0).map(exited));
    await sandbox?.close();
    sandbox = undefined;
  });

  async function setUp(server: RedisServer): Promise<Setup> {
    sandbox = await startSandbox({
      products: 60,
      seed: 7,
      orderRateLimit: 6000,
      asyncCompleteMs: 200,
    });
    const dataDir = await tmpDir("outage-data");
    const client = new ApiClient({
      baseUrl: sandbox.url,
      apiKey: "test-key-123456",
      timeoutMs: 5000,
    });
    await syncCatalog({ client, dataDir });
    const file = join(dataDir, "orders.csv");
    await writeLargeCsv((await loadCurrentIndex(dataDir))!, file, ROWS);
    const env = {
      GIFTJOBS_API_URL: sandbox.url,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_REDIS_URL: server.url,
      GIFTJOBS_PREFIX: `gjtest-outage-${randomBytes(4).toString("hex")}`,
      GIFTJOBS_DATA_DIR: dataDir,
      // About 4 s of work: the outage, begun at 20% done (read from the ledger at once), falls
      // in its middle, with orders queued, being sent and being followed.
      GIFTJOBS_ORDER_RATE_LIMIT: "3000",
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    return { server, sandbox, env, file };
  }

  function startWorker(setup: Setup, extra: string[] = []): CliChild {
    const worker = spawnCli(
      [
        "worker",
        "--queues",
        "orders",
        "--concurrency",
        "4",
        "--lock-duration",
        String(LOCK_MS),
        ...extra,
      ],
      setup.env,
    );
    children.push(worker);
    return worker;
  }

  async function importAll(setup: Setup): Promise<void> {
    const imported = await runCli(
      ["orders", "import", setup.file, "--campaign", CAMPAIGN, "--yes", "--json"],
      setup.env,
    );
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
  }

  /**
   * Rows done, read from the ledger on a connection of its own. Not through a `giftjobs` child:
   * one takes a second or more on a loaded machine, and the campaign ran on meanwhile.
   */
  async function rowsDone(setup: Setup): Promise<number> {
    return onConnectionTo(setup.server.port, async (redis) => {
      const c = await new Ledger(redis, setup.env.GIFTJOBS_PREFIX!).campaigns.counts(CAMPAIGN);
      return c.completed + c.failed_final + c.failed_uncertain;
    });
  }

  /** Waits for the campaign through `orders status --wait`, then counts items at the sandbox. */
  async function expectDoneExactlyOnce(setup: Setup): Promise<void> {
    step = "orders status --wait";
    const waited = await runCli(
      ["orders", "status", "--campaign", CAMPAIGN, "--wait", "--timeout", "90", "--json"],
      setup.env,
    );
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      total: ROWS,
      completed: ROWS,
      failed_final: 0,
      failed_uncertain: 0,
    });
    step = "counting at the sandbox";
    const orders = await sandboxOrders(setup.sandbox);
    const emails = orders.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(emails).toHaveLength(ROWS);
    expect(new Set(emails).size).toBe(ROWS);
  }

  /** What the worker printed on stderr during the outage: a few lines, no stack trace. */
  function expectQuietOutage(outage: string): void {
    const lines = outage.split("\n").filter(Boolean);
    expect(lines.length, outage).toBeLessThanOrEqual(4);
    expect(outage).not.toContain("    at ");
    expect(outage).toMatch(
      /giftjobs: Redis at 127\.0\.0\.1:\d+ is not answering \(\d+ s\): waiting for it; nothing is lost/,
    );
  }

  async function outageMidCampaign(how: "stop" | "kill"): Promise<void> {
    const server = await startRedisServer({
      args: ["--appendonly", "yes", "--appendfsync", "always"],
    });
    const setup = await setUp(server);
    step = "import";
    await importAll(setup);
    const metricsPort = await freePort();
    const worker = startWorker(setup, ["--metrics-port", String(metricsPort)]);
    step = "waiting for 20%";
    await eventually(
      async () => (await rowsDone(setup)) >= ROWS * 0.2,
      "20% of the rows done",
      60_000,
    );
    step = `Redis ${how}`;
    const before = worker.printed().stderr.length;
    await (how === "stop" ? server.stop() : server.kill());
    // The outage's length is the thing tested: longer than a job's lock, so the worker has to
    // ride it out; /metrics is scraped half-way through it.
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    step = "scraping /metrics while Redis is away";
    // Answered at once, saying Redis is down, and no warning line per gauge (checked below).
    expect(await redisUp(metricsPort)).toBe("0");
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    step = "restarting Redis";
    await server.restart();
    await eventually(
      async () => worker.printed().stderr.includes("Redis is back after"),
      "the worker to say Redis is back",
      30_000,
    );
    expectQuietOutage(worker.printed().stderr.slice(before));
    await eventually(async () => (await redisUp(metricsPort)) === "1", "giftjobs_redis_up 1");
    await expectDoneExactlyOnce(setup);
    step = "stopping the worker";
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
  }

  it("a Redis stopped cleanly mid-campaign and restarted: the worker waits, says so in a line every few seconds, and finishes the campaign exactly once", async () => {
    await outageMidCampaign("stop");
  }, 120_000);

  it("a Redis SIGKILLed mid-campaign and restarted: the same", async () => {
    await outageMidCampaign("kill");
  }, 120_000);

  it("a worker stopped while it waits for Redis to come up exits 0 at once, with no stack", async () => {
    const port = await freePort();
    const down = await setUp({ url: `redis://127.0.0.1:${port}` } as RedisServer);
    // At info, to see it say that nothing had started.
    const setup = { ...down, env: { ...down.env, GIFTJOBS_LOG_LEVEL: "info" } };
    // With its metrics endpoint, whose connection has not come up either.
    const worker = startWorker(setup, ["--metrics-port", String(await freePort())]);
    step = "worker waiting for Redis";
    await eventually(
      async () => worker.printed().stderr.includes("is not answering"),
      "the worker to say Redis is not answering",
      20_000,
    );
    step = "SIGTERM";
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
    // It gave up waiting rather than finishing a wait: nothing had started.
    expect(worker.printed().stderr).toContain("worker stopped before Redis answered");
    expect(worker.printed().stderr).not.toContain("    at ");
  });

  it("a worker started before Redis is up waits for it, then starts", async () => {
    const port = await freePort();
    const dir = await tmpDir("outage-redis");
    // Not started yet: the worker is pointed at where it will be.
    const setup = await setUp({ url: `redis://127.0.0.1:${port}` } as RedisServer);
    const worker = startWorker(setup);
    step = "worker waiting for Redis";
    await eventually(
      async () => worker.printed().stderr.includes("is not answering"),
      "the worker to say Redis is not answering",
      20_000,
    );
    // Still waiting 2 s on: a connection with a retry limit (the commands' 3 retries,
    // src/redis/connection.ts) gives its PING up in well under that, and the worker ends.
    await holdsFor(async () => worker.exitCode === null, 2000, "the worker still waiting");
    step = "starting Redis";
    const server = await startRedisServer({ port, dir, args: ["--appendonly", "yes"] });
    await importAll({ ...setup, server });
    await eventually(
      async () => worker.printed().stderr.includes("Redis is back after"),
      "the worker to say Redis answers",
      30_000,
    );
    expectQuietOutage(worker.printed().stderr);
    await expectDoneExactlyOnce(setup);
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
  }, 120_000);

  it("orders status --wait and the dashboard ride out a stopped Redis and carry on after", async () => {
    const server = await startRedisServer({ args: ["--appendonly", "yes"] });
    const setup = await setUp(server);
    step = "import";
    await importAll(setup);
    const dashboard = spawnCli(["dashboard", "--port", "0"], setup.env);
    children.push(dashboard);
    step = "dashboard start";
    await eventually(
      async () => dashboard.output().includes("dashboard on "),
      "the dashboard",
      20_000,
    );
    const url = /dashboard on (\S+)/.exec(dashboard.output())![1]!;
    // The wait is under way (its connection open) before Redis goes.
    const before = await giftjobsClients(server);
    const waiting = spawnCli(
      ["orders", "status", "--campaign", CAMPAIGN, "--wait", "--timeout", "90", "--json"],
      setup.env,
    );
    children.push(waiting);
    step = "status --wait start";
    await eventually(async () => (await giftjobsClients(server)) > before, "status --wait", 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    step = "Redis stopped";
    await server.stop();
    // A page asked while Redis is away: an error page, not a crash.
    await fetch(url).catch(() => undefined);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await fetch(url).catch(() => undefined);
    await server.restart();
    step = "worker after the outage";
    startWorker(setup);
    const waited = await finishedRun(waiting);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ completed: ROWS });
    expectQuietOutage(waited.stderr);
    expect(waited.stderr).toContain("Redis is back after");
    step = "dashboard after the outage";
    await eventually(async () => (await fetch(url)).status === 200, "a dashboard page", 20_000);
    expect(dashboard.exitCode).toBeNull();
    expectQuietOutage(dashboard.printed().stderr);
  }, 120_000);

  it("an import that loses Redis mid-way stops with one line and exit 1; run again, it records the rest", async () => {
    const server = await startRedisServer({
      args: ["--appendonly", "yes", "--appendfsync", "always"],
    });
    const setup = await setUp(server);
    // 20 batches of 500 (src/import/import-survey.ts): Redis is killed once four are recorded
    // in it, and the other 16 take about a second more (seen: 0.9 s for 17). Four: pass 2 sends
    // a batch while up to two before it wait for their answers (IN_FLIGHT,
    // src/import/recording-pipeline.ts), so the fourth is sent only once the first's answer is
    // back and counted. Killed at the first, the import could say "at least 0 rows" with that
    // batch in Redis, its answer lost with it.
    const rows = 10_000;
    await writeLargeCsv((await loadCurrentIndex(setup.env.GIFTJOBS_DATA_DIR!))!, setup.file, rows);
    const args = [
      "orders",
      "import",
      setup.file,
      "--campaign",
      CAMPAIGN,
      "--yes",
      "--no-balance-check",
    ];
    // Only for the key's name: the connection is never opened.
    const unopened = new Redis(server.port, "127.0.0.1", { lazyConnect: true });
    const pending = new Ledger(unopened, setup.env.GIFTJOBS_PREFIX!).keys(CAMPAIGN).pending;
    unopened.disconnect();
    step = "import";
    const importing = spawnCli([...args, "--json"], setup.env);
    children.push(importing);
    await eventually(
      async () => Number(await redisAt(server.port, "LLEN", pending).catch(() => 0)) > 1500,
      "four batches recorded",
      60_000,
    );
    await server.kill();
    const run = await finishedRun(importing);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /^giftjobs: Redis went away during the import \(127\.0\.0\.1:\d+ stopped answering\): at least \d+ rows? (?:was|were) recorded; run the same import again to record the rest\n$/,
    );
    // --json: still one document, saying what was recorded and why it stopped.
    const stopped = JSON.parse(run.stdout);
    expect(stopped.errors).toEqual([{ line: null, message: run.stderr.trim() }]);
    expect(stopped.enqueued).toBe(
      Number(/: at least (\d+) rows? (?:was|were) recorded/.exec(run.stderr)![1]),
    );
    step = "the same import again";
    await server.restart();
    const again = await runCli([...args, "--json"], setup.env);
    expect(again.code, again.stderr).toBe(0);
    // What the first run recorded is known; only the rest is recorded now. The batch Redis was
    // sent as it died may be recorded too, its answer lost: then one batch (500) more is known.
    const first = Number(/: at least (\d+) rows? (?:was|were) recorded/.exec(run.stderr)![1]);
    expect(first).toBeGreaterThan(0);
    const second = JSON.parse(again.stdout) as { enqueued: number; already_known: number };
    expect([first, first + 500]).toContain(second.already_known);
    expect(second.enqueued).toBe(rows - second.already_known);
    const status = await runCli(["orders", "status", "--campaign", CAMPAIGN, "--json"], setup.env);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: rows });
  }, 120_000);
});
