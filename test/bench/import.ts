// Benchmark of `orders import`: a generated file of BENCH_ROWS rows (1,000,000 by default)
// against a 5,000-product snapshot, beside the floor of the same file parsed by csv-parse with
// no validation and added with bare addBulk to a scratch queue, in chunks of the same size.

import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { parse } from "csv-parse";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { silentLogger } from "../../src/log.js";
import { importCampaign } from "../../src/orders/import-campaign.js";
import { Ledger } from "../../src/orders/ledger.js";
import type { OrderJobData } from "../../src/orders/order-job.js";
import { pickSampleProducts } from "../../src/orders/sample-csv.js";
import { ENQUEUE_CHUNK } from "../../src/queue/enqueue.js";
import { ORDER_JOB_OPTIONS } from "../../src/queue/job-options.js";
import { QUEUES } from "../../src/queue/names.js";
import { exited, spawnCli } from "../helpers/cli-process.js";
import { cleanPrefix, testRedis, uniquePrefix } from "../helpers/redis.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PRODUCTS = 5000;

/** Streams ROWS valid rows (distinct e-mails and references) from the snapshot's products. */
async function writeCsv(index: CatalogIndex, path: string): Promise<void> {
  const products = pickSampleProducts(index, 16);
  const out = createWriteStream(path);
  out.write("email,product_code,face_value,reference\n");
  for (let i = 0; i < ROWS; i += 1000) {
    const lines: string[] = [];
    for (let j = i; j < Math.min(i + 1000, ROWS); j++) {
      const p = products[j % products.length]!;
      const d = p.denominations!;
      const face = d.type === "fixed" ? d.list[j % d.list.length]! : d.min;
      lines.push(`user-${j}@example.com,${p.code},${face},bench-${j}`);
    }
    if (!out.write(`${lines.join("\n")}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/** Peak RSS while `fn` runs, sampled every 50 ms. */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakRss: number }> {
  let peakRss = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  try {
    const value = await fn();
    return { value, peakRss: Math.max(peakRss, process.memoryUsage().rss) };
  } finally {
    clearInterval(timer);
  }
}

/** The floor: parse, no checks, addBulk in chunks, one chunk in flight (as the importer does). */
async function floor(file: string, queue: Queue): Promise<number> {
  let chunk: { name: string; data: unknown; opts: object }[] = [];
  let rows = 0;
  const parser = createReadStream(file).pipe(parse({ from_line: 2 }));
  for await (const cells of parser as AsyncIterable<string[]>) {
    rows += 1;
    chunk.push({
      name: "order-create",
      data: cells,
      opts: { ...ORDER_JOB_OPTIONS, jobId: `floor-${rows}` },
    });
    if (chunk.length >= ENQUEUE_CHUNK) {
      await queue.addBulk(chunk);
      chunk = [];
    }
  }
  if (chunk.length) await queue.addBulk(chunk);
  return rows;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

export async function run(): Promise<void> {
  // The sandbox runs in a child process, so the RSS measured here is the importer's own.
  const sandbox = await childSandbox();
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-import-"));
  const redis = testRedis();
  const prefix = uniquePrefix("bench-import");
  const floorPrefix = uniquePrefix("bench-floor");
  const queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
  const scratch = new Queue("floor", { connection: redis, prefix: floorPrefix });
  try {
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: "bench" });
    await syncCatalog({ client, dataDir });
    const index = (await loadCurrentIndex(dataDir))!;
    const file = join(dataDir, "orders.csv");
    await writeCsv(index, file);
    process.stdout.write(
      `${ROWS.toLocaleString("en-US")} rows, ${Object.keys(index.entries).length} products in the snapshot; RSS before: ${mb(process.memoryUsage().rss)}\n`,
    );

    // The importer first: its peak RSS must not include what the floor left in the heap.
    const imported = await withPeakRss(async () => {
      const started = performance.now();
      const result = await importCampaign(
        { file, campaign: "bench" },
        { ledger: new Ledger(redis, prefix), queue, catalog: index, client, log: silentLogger },
      );
      return { ms: performance.now() - started, result };
    });
    if (imported.value.result.enqueued !== ROWS)
      throw new Error(`imported ${imported.value.result.enqueued} rows, expected ${ROWS}`);
    await cleanPrefix(redis, prefix);

    const bare = await withPeakRss(async () => {
      const started = performance.now();
      const rows = await floor(file, scratch);
      return { ms: performance.now() - started, rows };
    });
    await cleanPrefix(redis, floorPrefix);

    const importRate = perSecond(ROWS, imported.value.ms);
    const floorRate = perSecond(bare.value.rows, bare.value.ms);
    const ratio = imported.value.ms / bare.value.ms;
    const table = [
      ["", "time", "rows/s", "peak RSS"],
      [
        "importer",
        `${(imported.value.ms / 1000).toFixed(1)} s`,
        importRate.toLocaleString("en-US"),
        mb(imported.peakRss),
      ],
      [
        "floor",
        `${(bare.value.ms / 1000).toFixed(1)} s`,
        floorRate.toLocaleString("en-US"),
        mb(bare.peakRss),
      ],
    ];
    for (const row of table)
      process.stdout.write(`${row.map((c, i) => c.padEnd(i === 0 ? 10 : 14)).join("")}\n`);
    process.stdout.write(
      `importer/floor time ratio ${ratio.toFixed(2)}x (goal <= 2x); importer peak RSS ${mb(imported.peakRss)} (goal <= 300 MB)\n`,
    );
  } finally {
    await queue.close();
    await scratch.close();
    await cleanPrefix(redis, prefix);
    await cleanPrefix(redis, floorPrefix);
    await redis.quit();
    sandbox.child.kill("SIGTERM");
    await exited(sandbox.child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function childSandbox(): Promise<{ url: string; child: ReturnType<typeof spawnCli> }> {
  const child = spawnCli(
    ["sandbox", "--port", "0", "--products", String(PRODUCTS), "--seed", "11"],
    {},
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(child.output())?.[1];
    if (url) return { url, child };
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`sandbox did not start: ${child.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
