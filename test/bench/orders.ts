// Benchmark of placing orders against the in-process sandbox:
// (a) end to end (import, then startWorkers) beside a bare p-limit loop of ApiClient.createOrder;
// (b) how much of the service's rate limit the worker's limiter uses, and how many 429s it meets;
// (c) rows delivered per minute under that limit with 200 items per order against 1.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import pLimit from "p-limit";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { type Config, loadConfig } from "../../src/config.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { startReceiverFor } from "../../src/webhooks/receiver-for-config.js";
import { startWorkers } from "../../src/worker/start-workers.js";
import {
  CHILD_RUNTIME,
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
  startChild,
} from "../helpers/bench-child.js";
import { printFigure, printNotes } from "../helpers/bench-figures.js";
import { loadAverage, spread } from "../helpers/bench-stats.js";
import { freePort } from "../helpers/free-port.js";
import { recordedBodies } from "../helpers/ledger-fixtures.js";
import {
  cleanPrefix,
  REDIS_URL,
  redisCpuSeconds,
  testRedis,
  uniquePrefix,
} from "../helpers/redis.js";

// Enough orders (about 6 s) for status polls, which start 1 s after each order, to run beside
// the creates in a steady state rather than mostly after the measurement.
const ORDERS = Number(process.env.BENCH_ORDERS ?? 6000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 120);
const PACKED_ROWS = Number(process.env.BENCH_PACKED_ROWS ?? 100_000);
const CONCURRENCY = 50;
const E2E_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// BENCH_ONLY=a (or b, c) runs one part; (c) needs (b)'s figure, so it runs (b) too.
const ONLY = process.env.BENCH_ONLY;
const only = (part: string) => !ONLY || ONLY === part;
const LATENCY_MS = 50;
const LIMIT_PER_MINUTE = 3000;
const UNLIMITED = 10_000_000;
const API_KEY = "bench-key-123456";
const SELF = fileURLToPath(import.meta.url);
// (a) runs the bare loop and the workers each in a child process of their own, as a script and
// `giftjobs worker` run beside a service that is elsewhere; BENCH_ORDERS_SHARED_THREAD=1 runs
// them in this process, on the sandbox's thread (sessions 1 to 3 measured that way).
const SHARED_THREAD = process.env.BENCH_ORDERS_SHARED_THREAD === "1";

interface Bench {
  sandbox: Sandbox;
  index: CatalogIndex;
  currency: string;
  dataDir: string;
  client: ApiClient;
}

/** Clears the sandbox (orders, keys, rate window, stats) and gives it money for any campaign. */
async function resetSandbox(bench: Bench, faults: Record<string, number>): Promise<void> {
  const post = (path: string, body: unknown) =>
    fetch(`${bench.sandbox.url}${path}`, { method: "POST", body: JSON.stringify(body) });
  await post("/_sandbox/reset", {});
  await post("/_sandbox/faults", faults);
  await post("/_sandbox/balances", { [bench.currency]: "1000000000000" });
}

async function orderStats(bench: Bench): Promise<Record<string, number>> {
  const res = await fetch(`${bench.sandbox.url}/_sandbox/stats`);
  const stats = (await res.json()) as { requests: Record<string, Record<string, number>> };
  return stats.requests["POST /v2/order"] ?? {};
}

/** The config a worker (or receiver) of the bench's campaign under `prefix` runs with. */
function benchConfig(url: string, dataDir: string, prefix: string, perMinute: number): Config {
  return loadConfig({
    env: {
      GIFTJOBS_API_URL: url,
      GIFTJOBS_API_KEY: API_KEY,
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_ORDER_RATE_LIMIT: String(perMinute),
      GIFTJOBS_LOG_LEVEL: "silent",
      // BENCH_DAILY_LIMIT: the workers hold each order against a daily limit (START's reserve).
      GIFTJOBS_DAILY_LIMIT: process.env.BENCH_DAILY_LIMIT ?? "",
    },
  });
}

/** What the clients of a campaign need: its ledger, worker config and progress counts. */
function campaignHandle(url: string, dataDir: string, prefix: string, label: string) {
  const redis = testRedis();
  const ledger = new Ledger(redis, prefix);
  return {
    prefix,
    label,
    redis,
    ledger,
    config: (perMinute: number) => benchConfig(url, dataDir, prefix, perMinute),
    /** Rows whose order the service has answered (created or refused). */
    sent: async () => {
      const c = await ledger.campaigns.counts(label);
      return c.total - c.queued - c.in_flight;
    },
    /** Rows with a final outcome (async orders followed to their end). */
    settled: async () => {
      const c = await ledger.campaigns.counts(label);
      return c.completed + c.failed_final + c.failed_uncertain;
    },
  };
}

type CampaignHandle = ReturnType<typeof campaignHandle>;

/** A campaign of `rows` rows under a fresh prefix, imported and ready for workers. */
async function campaign(bench: Bench, label: string, rows: number, itemsPerOrder = 1) {
  const handle = campaignHandle(
    bench.sandbox.url,
    bench.dataDir,
    uniquePrefix(`bench-${label}`),
    label,
  );
  const queue = new Queue<OrderJobData>(QUEUES.orders, {
    connection: handle.redis,
    prefix: handle.prefix,
  });
  const file = join(bench.dataDir, `${label}.csv`);
  await writeFile(file, sampleCsv(bench.index, { rows, currency: bench.currency }));
  // A data dir of its own for the journal: no other campaign's paid memory is read.
  const records = await mkdtemp(join(tmpdir(), "gj-bench-stores-"));
  const started = performance.now();
  const result = await importCampaign(
    { file, campaign: label, itemsPerOrder },
    { ledger: handle.ledger, catalog: bench.index, log: silentLogger, stores: fileStores(records) },
  );
  const importMs = performance.now() - started;
  await rm(records, { recursive: true, force: true });
  return {
    ...handle,
    orders: result.orders,
    importMs,
    dispose: async () => {
      await queue.close();
      await cleanPrefix(handle.redis, handle.prefix);
      await handle.redis.quit();
    },
  };
}

type Campaign = Awaited<ReturnType<typeof campaign>>;

/** Runs workers until every row is sent or `seconds` pass; returns rows sent and the time. */
async function work(
  c: CampaignHandle,
  perMinute: number,
  rows: number,
  seconds = Infinity,
  firstPollDelayMs?: number,
  untilSettled = false,
  webhooks?: Hooks,
) {
  const config = c.config(perMinute);
  // As `worker --webhook-port` runs it: in the workers' process, on a connection of its own.
  const receiver =
    webhooks && !webhooks.apart
      ? await startReceiverFor(config, {
          secret: webhooks.secret,
          log: silentLogger,
          port: webhooks.port,
        })
      : undefined;
  // When the last order's answer was recorded (one row per order, all accepted: (a)); the
  // counts read every 50 ms end the other runs, and this one if it never comes.
  let answered = 0;
  let lastAnswerAt: number | undefined;
  const onOutcome = (outcome: string) => {
    if (outcome !== "submitted" && outcome !== "completed") return;
    answered += 1;
    if (answered === rows) lastAnswerAt = performance.now();
  };
  const workers = await startWorkers({
    config,
    log: silentLogger,
    queues: ["orders"],
    concurrency: CONCURRENCY,
    timings: { firstPollDelayMs },
    webhooks: webhooks ? { firstPollDelayMs: 30_000 } : undefined,
    hooks: { onOutcome },
  });
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let sent = 0;
  try {
    while (performance.now() < deadline) {
      sent = await c.sent();
      if (sent >= rows) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = (lastAnswerAt ?? performance.now()) - started;
    while (untilSettled && (await c.settled()) < rows) await new Promise((r) => setTimeout(r, 50));
    return { sent, ms, settledMs: performance.now() - started };
  } finally {
    await workers.close();
    await receiver?.close();
  }
}

/**
 * What a hand-written script does: the same bodies and keys, p-limit, createOrder. Returns the
 * time of the loop (the bodies are read before it).
 */
async function bareLoop(url: string, c: CampaignHandle): Promise<number> {
  const client = new ApiClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 30_000 });
  const requests = await recordedBodies(c.ledger, c.label);
  const limit = pLimit(CONCURRENCY);
  const started = performance.now();
  await Promise.all(
    [...requests].map(([key, body]) =>
      limit(() => client.createOrder(body, { idempotencyKey: key })),
    ),
  );
  return performance.now() - started;
}

/** One client of (a), as the parent describes it to a child process. */
interface ClientSpec {
  kind: "bare" | "workers";
  url: string;
  dataDir: string;
  prefix: string;
  label: string;
  rows: number;
  /** Workers: hold status polls back this long (the create path alone). */
  firstPollDelayMs?: number;
  /** Workers with webhooks on: the receiver's port and secret (polls after 30 s, the net). */
  webhooks?: Hooks;
}

interface ClientRun {
  /**
   * Rows sent, the time until they were, and until all settled (workers). Not `ms`: that is
   * the child's whole run (ChildMeasure), settling included.
   */
  sent: number;
  sentMs: number;
  settledMs: number;
}

/** Runs one client of (a) here: in the child process, or in the parent with SHARED_THREAD. */
async function runClientHere(spec: ClientSpec): Promise<ClientRun> {
  const handle = campaignHandle(spec.url, spec.dataDir, spec.prefix, spec.label);
  try {
    if (spec.kind === "bare") {
      const ms = await bareLoop(spec.url, handle);
      return { sent: spec.rows, sentMs: ms, settledMs: ms };
    }
    const untilSettled = spec.firstPollDelayMs === undefined;
    const run = await work(
      handle,
      UNLIMITED,
      spec.rows,
      Infinity,
      spec.firstPollDelayMs,
      untilSettled,
      spec.webhooks,
    );
    return { sent: run.sent, sentMs: run.ms, settledMs: run.settledMs };
  } finally {
    await handle.redis.quit();
  }
}

/**
 * Where the sandbox sends webhooks; `apart`: the receiver runs in a process of its own, as
 * `giftjobs webhooks` (else in the workers' one, as `worker --webhook-port`).
 */
interface Hooks {
  port: number;
  secret: string;
  apart?: boolean;
}

/** The receiver alone, as `giftjobs webhooks` runs it, until SIGTERM. */
async function serveReceiverHere(spec: ClientSpec): Promise<object> {
  const receiver = await startSpecReceiver(spec);
  process.stdout.write("ready\n");
  await new Promise((resolve) => process.once("SIGTERM", resolve));
  await receiver.close();
  return {};
}

/** The receiver of `spec`'s campaign, on the port the sandbox sends to. */
function startSpecReceiver(spec: ClientSpec) {
  return startReceiverFor(benchConfig(spec.url, spec.dataDir, spec.prefix, UNLIMITED), {
    secret: spec.webhooks!.secret,
    log: silentLogger,
    port: spec.webhooks!.port,
  });
}

/** Runs `fn` beside a receiver in a child process of its own; returns its result and that CPU. */
async function withReceiverApart<T>(
  script: string,
  spec: ClientSpec,
  fn: () => Promise<T>,
): Promise<{ value: T; receiverCpu: number }> {
  if (SHARED_THREAD) {
    // On the sandbox's thread like the clients: apart only from the workers' own code.
    const receiver = await startSpecReceiver(spec);
    try {
      return { value: await fn(), receiverCpu: Number.NaN };
    } finally {
      await receiver.close();
    }
  }
  const child = await startChild(script, { BENCH_ORDERS_RECEIVER: JSON.stringify(spec) });
  try {
    const value = await fn();
    const report = await child.stop<ChildMeasure>();
    return { value, receiverCpu: report.cpuMs / 1000 };
  } catch (error) {
    await child.stop().catch(() => undefined);
    throw error;
  }
}

/** Runs one client of (a) in a child process of its own; its CPU is its own. */
async function runClient(
  script: string,
  spec: ClientSpec,
): Promise<ClientRun & { clientCpu?: number }> {
  if (SHARED_THREAD) return runClientHere(spec);
  const report = await runChild<ClientRun & ChildMeasure>(script, {
    BENCH_ORDERS_CLIENT: JSON.stringify(spec),
  });
  return { ...report, clientCpu: report.cpuMs / 1000 };
}

const fixed = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** CPU seconds of this process and of Redis while `fn` runs. */
async function cpuOf<T>(
  redis: Campaign["redis"],
  fn: () => Promise<T>,
): Promise<{ value: T; cpu: number; redisCpu: number }> {
  const redisBefore = await redisCpuSeconds(redis);
  const before = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(before);
  return {
    value,
    cpu: (used.user + used.system) / 1e6,
    redisCpu: (await redisCpuSeconds(redis)) - redisBefore,
  };
}

const E2E_FAULTS = { latency_ms: LATENCY_MS, order_rate_limit: UNLIMITED };

/**
 * One round of (a): the bare loop, then the workers, on the same orders (keys replayed); then
 * the same orders again, in campaigns of their own, with webhooks on. The campaigns are all
 * imported first: an import (in this process, the sandbox's) just before a run would leave its
 * garbage to be collected by the sandbox during that run, and only the first run follows none.
 */
async function endToEndRound(bench: Bench, script: string, round: number) {
  const c = await campaign(bench, `e2e-${round}`, ORDERS);
  const c2 = await campaign(bench, `e2e-wh-${round}`, ORDERS);
  const c3 = await campaign(bench, `e2e-apart-${round}`, ORDERS);
  try {
    const spec = { ...specOf(bench, c), rows: ORDERS };
    await resetSandbox(bench, E2E_FAULTS);
    const bare = await cpuOf(c.redis, () => runClient(script, { ...spec, kind: "bare" }));
    await resetSandbox(bench, E2E_FAULTS);
    const workers = await cpuOf(c.redis, () => runClient(script, { ...spec, kind: "workers" }));
    const polled = await lookups(bench);
    await resetSandbox(bench, E2E_FAULTS);
    const spec2 = { ...specOf(bench, c2), rows: ORDERS, kind: "workers" as const };
    const webhooks = await withWebhooks(bench, (hooks) =>
      cpuOf(c2.redis, () => runClient(script, { ...spec2, webhooks: hooks })),
    );
    const pushed = await lookups(bench);
    // And once more with the receiver in a process of its own, as `giftjobs webhooks`.
    await resetSandbox(bench, E2E_FAULTS);
    const spec3 = { ...specOf(bench, c3), rows: ORDERS, kind: "workers" as const };
    const apart = await withWebhooks(bench, (hooks) => {
      const withHooks = { ...spec3, webhooks: { ...hooks, apart: true } };
      return withReceiverApart(script, withHooks, () =>
        cpuOf(c3.redis, () => runClient(script, withHooks)),
      );
    });
    return { bare, workers, webhooks, apart, polled, pushed, importMs: c.importMs };
  } finally {
    await Promise.all([c.dispose(), c2.dispose(), c3.dispose()]);
  }
}

/** GET /v2/order/{id} the sandbox answered since its last reset. */
async function lookups(bench: Bench): Promise<number> {
  const res = await fetch(`${bench.sandbox.url}/_sandbox/stats`);
  return ((await res.json()) as { order_lookups: number }).order_lookups;
}

/** Runs `fn` with the sandbox sending webhooks to a receiver `fn` starts; off again after. */
async function withWebhooks<T>(
  bench: Bench,
  fn: (hooks: { port: number; secret: string }) => Promise<T>,
): Promise<T> {
  const hooks = { port: await freePort(), secret: `whsec_${randomBytes(24).toString("base64")}` };
  await bench.sandbox.setWebhooks({
    webhookUrl: `http://127.0.0.1:${hooks.port}/webhooks`,
    webhookSecret: hooks.secret,
    webhookRetryBaseMs: 200,
  });
  try {
    return await fn(hooks);
  } finally {
    await bench.sandbox.state.webhooks?.close();
    bench.sandbox.state.webhooks = undefined;
  }
}

function specOf(bench: Bench, c: Campaign) {
  return { url: bench.sandbox.url, dataDir: bench.dataDir, prefix: c.prefix, label: c.label };
}

type Measured = Awaited<ReturnType<typeof cpuOf<Awaited<ReturnType<typeof runClient>>>>>;

/**
 * CPU of a run: with clients in children, the client's own and the sandbox's (this process);
 * on a shared thread, both together.
 */
function cpuText(m: Measured): string {
  const client = m.value.clientCpu;
  return client === undefined
    ? `${fixed(m.cpu, 1)} s`
    : `${fixed(client, 1)} + ${fixed(m.cpu, 1)} s`;
}

async function endToEnd(bench: Bench): Promise<void> {
  const script = SHARED_THREAD ? "" : await childScript(SELF);
  process.stdout.write(
    `(a) ${fixed(ORDERS)} async orders, concurrency ${CONCURRENCY}, latency ${LATENCY_MS} ms, ${E2E_ROUNDS} rounds; ` +
      (SHARED_THREAD
        ? "clients on the sandbox's thread (BENCH_ORDERS_SHARED_THREAD=1)\n"
        : `each client in a process of its own (${CHILD_RUNTIME === "tsx" ? "tsx" : "compiled JS"}), the sandbox in this one\n`),
  );
  const rows = [
    [
      "",
      "import",
      "bare p-limit",
      "workers",
      "orders/s bare",
      "workers",
      "ratio",
      "all COMPLETED",
      SHARED_THREAD ? "CPU bare / workers" : "CPU client + sandbox: bare / workers",
      "Redis CPU",
      "GET/order",
      "webhooks: workers",
      "ratio",
      "all COMPLETED",
      "CPU",
      "GET/order",
      "receiver apart: workers",
      "ratio",
      "CPU + receiver",
    ],
  ];
  const ratios: number[] = [];
  const webhookRatios: number[] = [];
  const apartRatios: number[] = [];
  for (let round = 1; round <= E2E_ROUNDS; round++) {
    const { bare, workers, webhooks, apart, polled, pushed, importMs } = await endToEndRound(
      bench,
      script,
      round,
    );
    const bareRate = ORDERS / (bare.value.sentMs / 1000);
    const workerRate = workers.value.sent / (workers.value.sentMs / 1000);
    const webhookRate = webhooks.value.sent / (webhooks.value.sentMs / 1000);
    const apartRun = apart.value.value;
    const apartRate = apartRun.sent / (apartRun.sentMs / 1000);
    ratios.push(workerRate / bareRate);
    webhookRatios.push(webhookRate / bareRate);
    apartRatios.push(apartRate / bareRate);
    rows.push([
      `round ${round}`,
      `${fixed(importMs / 1000, 1)} s`,
      `${fixed(bare.value.sentMs / 1000, 1)} s`,
      `${fixed(workers.value.sentMs / 1000, 1)} s`,
      fixed(bareRate),
      fixed(workerRate),
      `${fixed(workerRate / bareRate, 2)}x`,
      `${fixed(workers.value.settledMs / 1000, 1)} s`,
      `${cpuText(bare)} / ${cpuText(workers)}`,
      `${fixed(bare.redisCpu, 1)} s / ${fixed(workers.redisCpu, 1)} s`,
      fixed(polled / ORDERS, 2),
      `${fixed(webhooks.value.sentMs / 1000, 1)} s`,
      `${fixed(webhookRate / bareRate, 2)}x`,
      `${fixed(webhooks.value.settledMs / 1000, 1)} s`,
      cpuText(webhooks),
      fixed(pushed / ORDERS, 2),
      `${fixed(apartRun.sentMs / 1000, 1)} s`,
      `${fixed(apartRate / bareRate, 2)}x`,
      `${cpuText(apart.value)} + ${fixed(apart.receiverCpu, 1)} s`,
    ]);
  }
  printFigure(
    `(a) ${fixed(ORDERS)} async orders, concurrency ${CONCURRENCY}, latency ${LATENCY_MS} ms, ${E2E_ROUNDS} rounds`,
    rows,
  );
  // The same once more with the follow-up of async orders (GET /v2/order polls) held back
  // until the orders are sent: what the create path costs on its own.
  await resetSandbox(bench, E2E_FAULTS);
  const again = await campaign(bench, "e2e-nopoll", ORDERS);
  const createOnly = await runClient(script, {
    ...specOf(bench, again),
    kind: "workers",
    rows: ORDERS,
    firstPollDelayMs: 600_000,
  }).finally(() => again.dispose());
  const createRate = createOnly.sent / (createOnly.sentMs / 1000);
  printNotes(
    [
      `${loadAverage()} after the rounds`,
      `workers / bare: ${spread(ratios)}, worst ${fixed(Math.min(...ratios), 2)}x (goal >= 0.9x)`,
      `with webhooks: ${spread(webhookRatios)}, worst ${fixed(Math.min(...webhookRatios), 2)}x (goal >= 0.9x); ` +
        `receiver apart (giftjobs webhooks): ${spread(apartRatios)}, worst ${fixed(Math.min(...apartRatios), 2)}x`,
      `create path alone (polls held back): ${fixed(createRate)} orders/s`,
    ],
    "    ",
  );
}

/** (b); returns rows (= orders) sent per minute, for (c). */
async function rateLimit(bench: Bench): Promise<number> {
  await resetSandbox(bench, { latency_ms: LATENCY_MS, order_rate_limit: LIMIT_PER_MINUTE });
  // More rows than the window can take: the limiter, not the file, must be the bound.
  const rows = Math.ceil((LIMIT_PER_MINUTE * SECONDS) / 60 + 1000);
  const c = await campaign(bench, "limit", rows);
  try {
    const run = await work(c, LIMIT_PER_MINUTE, rows, SECONDS);
    const stats = await orderStats(bench);
    const limited = stats["429"] ?? 0;
    const total = Object.values(stats).reduce((a, b) => a + b, 0);
    const created = (stats["200"] ?? 0) + (stats["201"] ?? 0) + (stats["202"] ?? 0);
    const perMinute = created / (run.ms / 60_000);
    process.stdout.write(
      `\n(b) sandbox limit ${fixed(LIMIT_PER_MINUTE)}/min, worker limiter from orderRateLimitPerMinute ${fixed(LIMIT_PER_MINUTE)}, ${fixed(run.ms / 1000, 1)} s\n`,
    );
    printFigure(`(b) the rate limit, ${fixed(LIMIT_PER_MINUTE)}/min`, [
      ["orders created", "per minute", "achieved / allowed", "429s", "share of 429s"],
      [
        fixed(created),
        fixed(perMinute),
        `${fixed(perMinute / LIMIT_PER_MINUTE, 3)} (goal >= 0.97)`,
        fixed(limited),
        `${fixed((100 * limited) / Math.max(1, total), 2)}% (goal <= 1%)`,
      ],
    ]);
    return perMinute;
  } finally {
    await c.dispose();
  }
}

async function packing(bench: Bench, singleRowsPerMinute: number): Promise<void> {
  await resetSandbox(bench, { latency_ms: LATENCY_MS, order_rate_limit: LIMIT_PER_MINUTE });
  const c = await campaign(bench, "packed", PACKED_ROWS, 200);
  try {
    const run = await work(c, LIMIT_PER_MINUTE, PACKED_ROWS);
    const perMinute = run.sent / (run.ms / 60_000);
    process.stdout.write(
      `\n(c) ${fixed(PACKED_ROWS)} rows in ${fixed(c.orders)} orders of 200 items, same limit (import took ${fixed(c.importMs / 1000, 1)} s)\n`,
    );
    printFigure("(c) 200 items an order against one", [
      ["items per order", "rows", "time", "rows per minute"],
      ["200", fixed(run.sent), `${fixed(run.ms / 1000, 1)} s`, fixed(perMinute)],
      ["1 (from b)", "", "", fixed(singleRowsPerMinute)],
    ]);
    printNotes([`200 vs 1: ${fixed(perMinute / singleRowsPerMinute, 1)}x (goal >= 150x)`], "    ");
  } finally {
    await c.dispose();
  }
}

export async function run(): Promise<void> {
  const sandbox = await startSandbox({ products: 300, seed: 5, asyncCompleteMs: 200 });
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-orders-"));
  try {
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: API_KEY, timeoutMs: 30_000 });
    await syncCatalog({ client, dataDir });
    const index = (await loadCurrentIndex(dataDir))!;
    const currency = pickSampleProducts(index)[0]!.currency;
    const bench: Bench = { sandbox, index, currency, dataDir, client };
    if (only("a")) await endToEnd(bench);
    if (only("b") || only("c")) {
      const single = await rateLimit(bench);
      if (only("c")) await packing(bench, single);
    }
  } finally {
    await sandbox.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const receiverSpec = process.env.BENCH_ORDERS_RECEIVER;
if (receiverSpec) {
  await measureInChild(() => serveReceiverHere(JSON.parse(receiverSpec) as ClientSpec));
  process.exit(0);
}
const clientSpec = process.env.BENCH_ORDERS_CLIENT;
if (clientSpec) {
  await measureInChild(() => runClientHere(JSON.parse(clientSpec) as ClientSpec));
  process.exit(0);
}
