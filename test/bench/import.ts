// Benchmark of `orders import`: a generated file of BENCH_ROWS rows (1,000,000 by default)
// against a 5,000-product snapshot, beside the floor of the same file parsed by csv-parse with
// no validation and added with bare addBulk to a scratch queue, in chunks of the same size.
// Then an .xlsx of the same rows (BENCH_XLSX_ROWS, 200,000 by default; written by exceljs's
// streaming writer as Excel saves one: shared strings, face values as numbers), imported and
// compared with the import of a CSV of those same rows; then an .ods of those rows (as
// LibreOffice saves one: typed cells, each row's unused columns one repeated empty cell) beside
// them. Then zip bombs refused (see bombPart).
// BENCH_ONLY=csv|xlsx|ods|bomb runs one part.
// Each side runs in a fresh child process (test/helpers/bench-child.ts), so its peak RSS is its
// own, as `giftjobs orders import` would have it; the Redis CPU each cost is printed beside.

import { createReadStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { parse } from "csv-parse";
import type { Redis } from "ioredis";
import { ENQUEUE_CHUNK } from "../../jobs/orders/enqueue.js";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { ORDER_JOB_OPTIONS } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import {
  CHILD_RUNTIME,
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
} from "../helpers/bench-child.js";
import { exited, spawnCli } from "../helpers/cli.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { writeLargeOds } from "../helpers/ods.js";
import { cleanPrefix, redisCpuSeconds, testRedis, uniquePrefix } from "../helpers/redis.js";
import { writeLargeXlsx } from "../helpers/xlsx.js";
import { writeXlsxBomb } from "../helpers/zip-bomb.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? Math.min(ROWS, 200_000));
const ONLY = process.env.BENCH_ONLY;
/** The goals of the .xlsx import: its peak RSS, and its rows/s as a share of the CSV's. */
const XLSX_MAX_RSS = 300 * 2 ** 20;
const XLSX_MIN_SHARE = 1 / 3;
const SELF = fileURLToPath(import.meta.url);
const PRODUCTS = 5000;

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

interface ChildReport extends ChildMeasure {
  rows: number;
}

/**
 * Child side: the importer (of `file`), the floor, or a refusal (a dry run of a file that must
 * be refused, 0 rows), on the prepared snapshot and prefix.
 */
async function measure(kind: string, dataDir: string, file: string, prefix: string): Promise<void> {
  const redis = testRedis();
  try {
    if (kind === "floor") {
      const queue = new Queue("floor", { connection: redis, prefix });
      await measureInChild(async () => ({ rows: await floor(file, queue) }));
      await queue.close();
      return;
    }
    const catalog = (await loadCurrentIndex(dataDir))!;
    const queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
    const ledger = new Ledger(redis, prefix);
    if (kind === "refusal") {
      await measureInChild(async () => {
        const options = { file, campaign: "bench", dryRun: true, balanceCheck: false };
        const refused = await importCampaign(options, { ledger, catalog, log: silentLogger }).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (!(refused instanceof UserError)) throw refused ?? new Error(`${file} was imported`);
        return { rows: 0 };
      });
      await queue.close();
      return;
    }
    // "data-dir": as `orders import` runs, with the order journal and the paid memory
    // (docs/architecture/repeats.md) written under a data dir of its own, removed after.
    const records =
      kind === "data-dir" ? await mkdtemp(join(tmpdir(), "bench-records-")) : undefined;
    await measureInChild(async () => {
      const result = await importCampaign(
        { file, campaign: "bench", balanceCheck: false },
        { ledger, catalog, log: silentLogger, ...(records ? { dataDir: records } : {}) },
      );
      return { rows: result.enqueued };
    });
    if (records) await rm(records, { recursive: true, force: true });
    await queue.close();
  } finally {
    await redis.quit();
  }
}

type Measured = ChildReport & { redisCpu: number };

/** One measurement in a fresh child, with the Redis CPU it cost; its keys are deleted after. */
async function measureOnce(
  script: string,
  kind: "importer" | "data-dir" | "floor" | "refusal",
  dataDir: string,
  file: string,
  rows: number,
  redis: Redis,
): Promise<Measured> {
  const prefix = uniquePrefix(`bench-${kind}`);
  const before = await redisCpuSeconds(redis);
  try {
    const report = await runChild<ChildReport>(script, {
      BENCH_IMPORT_CHILD: kind,
      BENCH_IMPORT_DIR: dataDir,
      BENCH_IMPORT_FILE: file,
      BENCH_IMPORT_PREFIX: prefix,
    });
    if (report.rows !== rows) throw new Error(`${kind}: ${report.rows} rows, expected ${rows}`);
    return { ...report, redisCpu: (await redisCpuSeconds(redis)) - before };
  } finally {
    await cleanPrefix(redis, prefix);
  }
}

/** Both files' rows: 16 products, references bench-0, bench-1... */
const ROW_SHAPE = { products: 16, referencePrefix: "bench-" };

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

const verdict = (met: boolean) => (met ? "met" : "MISSED");

function printTable(lines: [string, Measured][]): void {
  const width = Math.max(10, ...lines.map(([name]) => name.length + 2));
  const table = [
    ["", "time", "rows/s", "peak RSS", "start RSS", "CPU", "Redis CPU"],
    ...lines.map(([name, r]) => [
      name,
      seconds(r.ms),
      perSecond(r.rows, r.ms).toLocaleString("en-US"),
      mb(r.maxRss),
      mb(r.startRss),
      seconds(r.cpuMs),
      seconds(r.redisCpu * 1000),
    ]),
  ];
  for (const row of table)
    process.stdout.write(`${row.map((c, i) => c.padEnd(i === 0 ? width : 12)).join("")}\n`);
}

/** The CSV importer beside the floor, over ROWS rows. */
async function csvPart(script: string, dataDir: string, redis: Redis): Promise<Measured> {
  const file = join(dataDir, "orders.csv");
  const importer = await measureOnce(script, "importer", dataDir, file, ROWS, redis);
  const recorded = await measureOnce(script, "data-dir", dataDir, file, ROWS, redis);
  const bare = await measureOnce(script, "floor", dataDir, file, ROWS, redis);
  printTable([
    ["importer", importer],
    ["importer with journal and paid memory", recorded],
    ["floor", bare],
  ]);
  process.stdout.write(
    `with a data dir (journal, paid memory) / without: ${(recorded.ms / importer.ms).toFixed(2)}x\n`,
  );
  const ratio = importer.ms / bare.ms;
  process.stdout.write(
    `importer/floor time ratio ${ratio.toFixed(2)}x (goal <= 2x: ${verdict(ratio <= 2)}); ` +
      `importer peak RSS ${mb(importer.maxRss)} (goal <= 300 MB: ${verdict(importer.maxRss <= 300 * 2 ** 20)})\n`,
  );
  return importer;
}

/**
 * The .xlsx importer over XLSX_ROWS rows beside the CSV importer over the same rows (the
 * CSV part's own figure when it had as many rows, else a CSV of those rows measured here).
 */
async function xlsxPart(
  script: string,
  dataDir: string,
  index: CatalogIndex,
  redis: Redis,
  csvImporter: Measured | undefined,
): Promise<Measured> {
  const xlsx = join(dataDir, "orders.xlsx");
  await writeLargeXlsx(index, xlsx, XLSX_ROWS, ROW_SHAPE);
  let csv = csvImporter;
  if (csv === undefined || ROWS !== XLSX_ROWS) {
    const same = join(dataDir, "orders-xlsx-rows.csv");
    await writeLargeCsv(index, same, XLSX_ROWS, ROW_SHAPE);
    csv = await measureOnce(script, "importer", dataDir, same, XLSX_ROWS, redis);
  }
  const measured = await measureOnce(script, "importer", dataDir, xlsx, XLSX_ROWS, redis);
  process.stdout.write(
    `\n.xlsx of the same ${XLSX_ROWS.toLocaleString("en-US")} rows (${mb((await stat(xlsx)).size)}):\n`,
  );
  printTable([
    ["xlsx importer", measured],
    ["csv importer", csv],
  ]);
  const share = perSecond(measured.rows, measured.ms) / perSecond(csv.rows, csv.ms);
  process.stdout.write(
    `xlsx rows/s ${share.toFixed(2)} of the CSV's (goal >= 0.33: ${verdict(share >= XLSX_MIN_SHARE)}); ` +
      `xlsx peak RSS ${mb(measured.maxRss)} (goal < 300 MB: ${verdict(measured.maxRss < XLSX_MAX_RSS)})\n`,
  );
  return measured;
}

/** The .ods importer over XLSX_ROWS rows, beside the .xlsx and CSV importers of the same rows. */
async function odsPart(
  script: string,
  dataDir: string,
  index: CatalogIndex,
  redis: Redis,
  others: [string, Measured][],
): Promise<void> {
  const ods = join(dataDir, "orders.ods");
  await writeLargeOds(index, ods, XLSX_ROWS, ROW_SHAPE);
  const measured = await measureOnce(script, "importer", dataDir, ods, XLSX_ROWS, redis);
  process.stdout.write(
    `\n.ods of the same ${XLSX_ROWS.toLocaleString("en-US")} rows (${mb((await stat(ods)).size)}):\n`,
  );
  printTable([["ods importer", measured], ...others]);
  const csv = others.find(([name]) => name === "csv importer")?.[1];
  if (csv === undefined) return;
  const share = perSecond(measured.rows, measured.ms) / perSecond(csv.rows, csv.ms);
  process.stdout.write(
    `ods rows/s ${share.toFixed(2)} of the CSV's; ods peak RSS ${mb(measured.maxRss)}\n`,
  );
}

/**
 * Two zip bombs of a 300 MB sheet (test/helpers/zip-bomb.ts), each refused by a dry run in a
 * child of its own: one whose zip states that size (refused from its directory, nothing
 * unpacked) and one that states 1 MB (stopped as it unpacks, by its ratio). A refusal must
 * cost less memory than an import: the goal is the .xlsx import's peak measured above, else
 * that import's goal.
 */
async function bombPart(
  script: string,
  dataDir: string,
  redis: Redis,
  xlsxImporter: Measured | undefined,
): Promise<void> {
  const stated = await writeXlsxBomb(join(dataDir, "bomb.xlsx"), 300);
  const understated = await writeXlsxBomb(join(dataDir, "liar.xlsx"), 300, { statedMb: 1 });
  const lines: [string, Measured][] = [
    ["bomb, stated", await measureOnce(script, "refusal", dataDir, stated, 0, redis)],
    ["bomb, understated", await measureOnce(script, "refusal", dataDir, understated, 0, redis)],
  ];
  if (xlsxImporter) lines.push(["xlsx importer", xlsxImporter]);
  process.stdout.write(`\nzip bombs of 300 MB (${mb((await stat(stated)).size)}) refused:\n`);
  printTable(lines);
  const goal = xlsxImporter?.maxRss ?? XLSX_MAX_RSS;
  const peak = Math.max(lines[0]![1].maxRss, lines[1]![1].maxRss);
  process.stdout.write(
    `refusals' peak RSS ${mb(peak)} (goal < ${xlsxImporter ? "the xlsx import's" : "300 MB"}, ${mb(goal)}: ${verdict(peak < goal)})\n`,
  );
}

export async function run(): Promise<void> {
  const script = await childScript(SELF);
  const sandbox = await childSandbox();
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-import-"));
  const redis = testRedis();
  try {
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: "bench" });
    await syncCatalog({ client, dataDir });
    const index = (await loadCurrentIndex(dataDir))!;
    process.stdout.write(
      `${ROWS.toLocaleString("en-US")} rows, ${Object.keys(index.entries).length} products in the snapshot; ` +
        `each side in a fresh child process (${CHILD_RUNTIME === "tsx" ? "under tsx" : "compiled JS"})\n`,
    );
    const runs = (part: string) => ONLY === undefined || ONLY === part;
    let csvImporter: Measured | undefined;
    if (runs("csv")) {
      await writeLargeCsv(index, join(dataDir, "orders.csv"), ROWS, ROW_SHAPE);
      csvImporter = await csvPart(script, dataDir, redis);
    }
    let xlsxImporter: Measured | undefined;
    if (runs("xlsx")) xlsxImporter = await xlsxPart(script, dataDir, index, redis, csvImporter);
    const others: [string, Measured][] = [];
    if (xlsxImporter) others.push(["xlsx importer", xlsxImporter]);
    if (csvImporter && ROWS === XLSX_ROWS) others.push(["csv importer", csvImporter]);
    if (runs("ods")) await odsPart(script, dataDir, index, redis, others);
    if (runs("bomb")) await bombPart(script, dataDir, redis, xlsxImporter);
  } finally {
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

const childKind = process.env.BENCH_IMPORT_CHILD;
if (childKind) {
  await measure(
    childKind,
    process.env.BENCH_IMPORT_DIR ?? "",
    process.env.BENCH_IMPORT_FILE ?? "",
    process.env.BENCH_IMPORT_PREFIX ?? "",
  );
}
