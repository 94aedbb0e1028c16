// Benchmark of campaigns on the pending lists and the dispatcher:
// (a) Redis memory per row of a campaign imported and not yet sent (used_memory before and
//     after the import, and MEMORY USAGE of each ledger key), one row per order and 200 rows
//     per order, and the BullMQ jobs in Redis after the import (none: the dispatcher adds them);
// (b) fairness: three big campaigns run at the service's rate limit by `giftjobs worker` in a
//     child process, then a 1-row campaign is imported; the time until its row is completed.
//     The BullMQ jobs in Redis are sampled during that run: about the dispatch budget, which the
//     running campaigns share (each window at least 4).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { startPrivateRedis } from "../../src/demo/private-redis.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { dispatchWindow } from "../../src/worker/dispatcher.js";
import { printFigure, printNotes } from "../helpers/bench-figures.js";
import { loadAverage } from "../helpers/bench-stats.js";
import { exited, spawnCli } from "../helpers/cli.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const FAIR_ROWS = Number(process.env.BENCH_FAIR_ROWS ?? 10_000);
// BENCH_ONLY=a (or b) runs one part.
const ONLY = process.env.BENCH_ONLY;
const only = (part: string) => !ONLY || ONLY === part;
const GOAL_BYTES_PER_ROW = 450;
const GOAL_SMALL_MS = 5000;
// The service's limit in (b), the sandbox's and the workers' alike: high enough for a short
// run, low enough that the limiter, not the machine, is the bound.
const LIMIT_PER_MINUTE = 3000;
const BIG_CAMPAIGNS = 3;
const WORKER_CONCURRENCY = 20;
const LATENCY_MS = 50;
// (b): how long the big campaigns run before the 1-row one is imported (steady state), and
// how long the 1-row one may take before the bench gives up on it.
const WARMUP_MS = 8000;
const SMALL_DEADLINE_MS = 60_000;
const WORKER_START_DEADLINE_MS = 60_000;
const SETTLE_MS = 1000;
const API_KEY = "bench-key-123456";

interface Bench {
  sandbox: Sandbox;
  index: CatalogIndex;
  currency: string;
  dataDir: string;
  redis: Redis;
}

const fixed = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Prints the table, and keeps it under `title` for `--write` (test/helpers/bench-figures.ts). */
const table = (title: string, rows: string[][]) => printFigure(title, rows, "    ");

/** Prints the lines under a table, and keeps them under it for `--write`. */
const verdicts = (lines: string[]) => printNotes(lines, "    ");

const verdict = (met: boolean) => (met ? "met" : "MISSED");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/** BullMQ jobs of the orders queue in Redis, in any state. */
async function jobsInRedis(queue: Queue): Promise<number> {
  const counts = await queue.getJobCounts(
    "active",
    "completed",
    "delayed",
    "failed",
    "prioritized",
    "waiting",
    "waiting-children",
  );
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Writes a campaign's file: `rows` rows with distinct e-mails and references. */
async function campaignFile(bench: Bench, label: string, rows: number): Promise<string> {
  const file = join(bench.dataDir, `${label}.csv`);
  await writeFile(
    file,
    sampleCsv(bench.index, { rows, currency: bench.currency, referencePrefix: label }),
  );
  return file;
}

async function importFile(
  bench: Bench,
  ledger: Ledger,
  file: string,
  campaign: string,
  { itemsPerOrder = 1, records }: { itemsPerOrder?: number; records?: string } = {},
) {
  // Without `records`, a data dir of its own: no other campaign's paid memory is read.
  const dir = records ?? (await mkdtemp(join(tmpdir(), "gj-bench-stores-")));
  try {
    return await importCampaign(
      { file, campaign, itemsPerOrder, ...(records ? { allowRepeats: true } : {}) },
      { ledger, catalog: bench.index, log: silentLogger, stores: fileStores(dir) },
    );
  } finally {
    if (!records) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * One line of (a): a campaign of ROWS rows imported under a fresh prefix, its memory measured.
 * `repeats`: the file was imported once before under another name, with a paid memory, and is
 * imported again with --allow-repeats, each row keeping the earlier row it repeats (`p` of its
 * extras cell: docs/architecture/repeats.md); the second import is measured.
 */
async function memoryOf(bench: Bench, itemsPerOrder: number, repeats = false) {
  const { redis } = bench;
  const prefix = uniquePrefix("bench-campaigns-mem");
  const ledger = new Ledger(redis, prefix);
  const queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
  const label = `mem-${itemsPerOrder}${repeats ? "-repeats" : ""}`;
  const file = await campaignFile(bench, label, ROWS);
  const records = repeats ? await mkdtemp(join(tmpdir(), "gj-bench-paid-")) : undefined;
  try {
    if (records) await importFile(bench, ledger, file, `${label}-first`, { records });
    await sleep(SETTLE_MS);
    const before = await usedMemory(redis);
    const started = performance.now();
    const result = await importFile(bench, ledger, file, label, { itemsPerOrder, records });
    const importMs = performance.now() - started;
    await sleep(SETTLE_MS);
    const after = await usedMemory(redis);
    // Exact sizes (SAMPLES 0 walks every element; fast enough at these sizes).
    const keys = ledger.keys(label);
    const perKey: Record<string, number> = {};
    for (const [name, key] of Object.entries(keys))
      perKey[name] = Number((await redis.memory("USAGE", key, "SAMPLES", 0)) ?? 0);
    const jobs = await jobsInRedis(queue);
    // Any key of the orders queue: only its meta (written by the Queue object itself) expected.
    const queueKeys = (await redis.keys(`${prefix}:${QUEUES.orders}:*`)).map((k) =>
      k.slice(prefix.length + 1),
    );
    return {
      itemsPerOrder: `${itemsPerOrder}${repeats ? ", repeats" : ""}`,
      rows: result.enqueued,
      orders: result.orders,
      importMs,
      usedDelta: after - before,
      perKey,
      jobs,
      queueKeys,
    };
  } finally {
    await queue.close();
    await cleanPrefix(redis, prefix);
    if (records) await rm(records, { recursive: true, force: true });
  }
}

/**
 * (a) runs on a redis-server of its own (the shared one's used_memory moves with every other
 * client's work), started on a free port and stopped after.
 */
async function memory(shared: Bench): Promise<void> {
  process.stdout.write(
    `(a) Redis memory of a campaign imported, not yet sent: ${fixed(ROWS)} rows with references, ` +
      `async; used_memory of a redis-server of the bench's own before and after the import ` +
      `(${SETTLE_MS} ms settle each), and MEMORY USAGE ... SAMPLES 0 of each ledger key\n`,
  );
  const dir = await mkdtemp(join(tmpdir(), "gj-bench-redis-"));
  const server = await startPrivateRedis(dir);
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  const bench = { ...shared, redis };
  let runs: Awaited<ReturnType<typeof memoryOf>>[];
  try {
    runs = [await memoryOf(bench, 1), await memoryOf(bench, 200), await memoryOf(bench, 1, true)];
  } finally {
    await redis.quit();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const names = Object.keys(runs[0]!.perKey);
  table(`(a) Redis memory of a campaign of ${fixed(ROWS)} rows, imported, not yet sent`, [
    [
      "rows/order",
      "rows",
      "orders",
      "import",
      "used_memory Δ",
      "bytes/row",
      "Σ keys/row",
      ...names.map((n) => `${n}/row`),
      "BullMQ jobs",
    ],
    ...runs.map((r) => {
      const sum = Object.values(r.perKey).reduce((a, b) => a + b, 0);
      return [
        r.itemsPerOrder,
        fixed(r.rows),
        fixed(r.orders),
        `${fixed(r.importMs / 1000, 1)} s`,
        `${fixed(r.usedDelta / 2 ** 20, 1)} MB`,
        fixed(r.usedDelta / r.rows),
        fixed(sum / r.rows),
        ...names.map((n) => fixed(r.perKey[n]! / r.rows, 1)),
        `${r.jobs} (keys: ${r.queueKeys.length > 3 ? r.queueKeys.length : r.queueKeys.join(" ") || "none"})`,
      ];
    }),
  ]);
  const one = runs[0]!;
  const bytes = one.usedDelta / one.rows;
  const repeated = runs[2]!;
  verdicts([
    `${loadAverage()}; the repeat marks (--allow-repeats, each row one earlier row): ` +
      `${fixed((repeated.usedDelta - one.usedDelta) / one.rows)} bytes/row more than the first import`,
    `one row per order: ${fixed(bytes)} bytes/row (goal <= ${GOAL_BYTES_PER_ROW}): ${verdict(bytes <= GOAL_BYTES_PER_ROW)}; ` +
      `BullMQ jobs after import: ${runs.map((r) => r.jobs).join(", ")} (goal 0): ${verdict(runs.every((r) => r.jobs === 0))}`,
  ]);
}

/** Counts of the sandbox's POST /v2/order answers by status. */
async function orderStats(sandbox: Sandbox): Promise<Record<string, number>> {
  const res = await fetch(`${sandbox.url}/_sandbox/stats`);
  const stats = (await res.json()) as { requests: Record<string, Record<string, number>> };
  return stats.requests["POST /v2/order"] ?? {};
}

/** Rows the service has answered (created or refused). */
async function sent(ledger: Ledger, campaign: string): Promise<number> {
  const c = await ledger.campaigns.counts(campaign);
  return c.total - c.queued - c.in_flight;
}

async function fairness(bench: Bench): Promise<void> {
  const { redis, sandbox } = bench;
  const post = (path: string, body: unknown) =>
    fetch(`${sandbox.url}${path}`, { method: "POST", body: JSON.stringify(body) });
  await post("/_sandbox/reset", {});
  await post("/_sandbox/faults", { latency_ms: LATENCY_MS, order_rate_limit: LIMIT_PER_MINUTE });
  await post("/_sandbox/balances", { [bench.currency]: "1000000000000" });
  const window = dispatchWindow(LIMIT_PER_MINUTE);
  process.stdout.write(
    `\n(b) ${BIG_CAMPAIGNS} campaigns of ${fixed(FAIR_ROWS)} rows (async, 1 row per order) at ` +
      `${fixed(LIMIT_PER_MINUTE)}/min (sandbox order_rate_limit = GIFTJOBS_ORDER_RATE_LIMIT), ` +
      `latency ${LATENCY_MS} ms, \`giftjobs worker --queues orders --concurrency ${WORKER_CONCURRENCY}\` ` +
      `in a child process, dispatch budget ${window} jobs shared by the running campaigns; after ${fixed(WARMUP_MS / 1000)} s a 1-row campaign is imported\n`,
  );
  const prefix = uniquePrefix("bench-campaigns-fair");
  const ledger = new Ledger(redis, prefix);
  const queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
  const big = Array.from({ length: BIG_CAMPAIGNS }, (_, i) => `big-${i + 1}`);
  const worker = { child: undefined as ReturnType<typeof spawnCli> | undefined };
  try {
    for (const name of big)
      await importFile(bench, ledger, await campaignFile(bench, name, FAIR_ROWS), name);
    const smallFile = await campaignFile(bench, "small", 1);
    worker.child = spawnCli(
      ["worker", "--queues", "orders", "--concurrency", String(WORKER_CONCURRENCY)],
      {
        GIFTJOBS_API_URL: sandbox.url,
        GIFTJOBS_API_KEY: API_KEY,
        GIFTJOBS_REDIS_URL: REDIS_URL,
        GIFTJOBS_PREFIX: prefix,
        GIFTJOBS_DATA_DIR: bench.dataDir,
        GIFTJOBS_ORDER_RATE_LIMIT: String(LIMIT_PER_MINUTE),
        GIFTJOBS_LOG_LEVEL: "warn",
      },
    );
    const child = worker.child;
    const samples: number[] = [];
    const sample = async () => samples.push(await jobsInRedis(queue));
    // Warm-up: until every big campaign is being sent, then WARMUP_MS more.
    const startDeadline = performance.now() + WORKER_START_DEADLINE_MS;
    const sentOf = async () => Promise.all(big.map((name) => sent(ledger, name)));
    while ((await sentOf()).some((n) => n === 0)) {
      if (performance.now() > startDeadline || child.exitCode !== null)
        throw new Error(`the worker did not start sending: ${child.output()}`);
      await sleep(100);
    }
    const warmStart = performance.now();
    const sentAtWarmStart = (await sentOf()).reduce((a, b) => a + b, 0);
    while (performance.now() - warmStart < WARMUP_MS) {
      await sample();
      await sleep(1000);
    }
    const sentBefore = await sentOf();
    const warmRate =
      (sentBefore.reduce((a, b) => a + b, 0) - sentAtWarmStart) /
      ((performance.now() - warmStart) / 60_000);

    // The 1-row campaign: from the start of its import to its row completed.
    const started = performance.now();
    await importFile(bench, ledger, smallFile, "small");
    const importMs = performance.now() - started;
    let sentMs: number | undefined;
    let doneMs: number | undefined;
    let lastSample = performance.now();
    while (performance.now() - started < SMALL_DEADLINE_MS) {
      const c = await ledger.campaigns.counts("small");
      const now = performance.now() - started;
      if (sentMs === undefined && c.total - c.queued - c.in_flight > 0) sentMs = now;
      if (c.completed + c.failed_final + c.failed_uncertain > 0) {
        doneMs = now;
        if (c.completed !== 1) throw new Error(`the 1-row campaign ended ${JSON.stringify(c)}`);
        break;
      }
      if (performance.now() - lastSample >= 1000) {
        lastSample = performance.now();
        await sample();
      }
      await sleep(20);
    }
    await sample();
    const sentDuring = (await sentOf()).map((n, i) => n - sentBefore[i]!);
    const stats = await orderStats(sandbox);
    const limited = stats["429"] ?? 0;
    const total = Object.values(stats).reduce((a, b) => a + b, 0);

    // The budget, plus what windows sized for fewer campaigns still hold while they drain.
    const bound = window + (BIG_CAMPAIGNS + 1) * 4 + Math.ceil(window / BIG_CAMPAIGNS);
    const ms = (n: number | undefined) => (n === undefined ? "-" : `${fixed(n / 1000, 2)} s`);
    table(
      `(b) ${BIG_CAMPAIGNS} campaigns of ${fixed(FAIR_ROWS)} rows and a 1-row one, ${fixed(LIMIT_PER_MINUTE)}/min`,
      [
        [
          "1-row import",
          "to sent (202)",
          "to completed",
          "big rows sent meanwhile",
          "rate before (rows/min)",
          "BullMQ jobs sampled",
          "max / bound",
          "429s",
        ],
        [
          ms(importMs),
          ms(sentMs),
          ms(doneMs),
          sentDuring.map((n) => fixed(n)).join(" / "),
          fixed(warmRate),
          samples.join(" "),
          `${Math.max(...samples)} / ${bound}`,
          `${fixed(limited)} of ${fixed(total)}`,
        ],
      ],
    );
    verdicts([
      `1-row campaign, import to completed: ${ms(doneMs)} (goal < ${GOAL_SMALL_MS / 1000} s): ` +
        `${verdict(doneMs !== undefined && doneMs < GOAL_SMALL_MS)}; ` +
        `jobs in Redis within the budget: ${verdict(Math.max(...samples) <= bound)}`,
    ]);
  } finally {
    if (worker.child && worker.child.exitCode === null) {
      worker.child.kill("SIGTERM");
      await exited(worker.child);
    }
    await queue.close();
    await cleanPrefix(redis, prefix);
  }
}

export async function run(): Promise<void> {
  const sandbox = await startSandbox({ products: 300, seed: 5, asyncCompleteMs: 200 });
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-campaigns-"));
  const redis = testRedis();
  try {
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: API_KEY, timeoutMs: 30_000 });
    await syncCatalog({ client, dataDir });
    const index = (await loadCurrentIndex(dataDir))!;
    const currency = pickSampleProducts(index)[0]!.currency;
    const bench: Bench = { sandbox, index, currency, dataDir, redis };
    if (only("a")) await memory(bench);
    if (only("b")) await fairness(bench);
  } finally {
    await redis.quit();
    await sandbox.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
