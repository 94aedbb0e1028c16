// Benchmark of `orders import`: a generated file of BENCH_ROWS rows (1,000,000 by default; 16
// products) against a 5,000-product snapshot, as `orders import` runs it (the order journal and
// the paid memory under a data dir), beside the floor (test/bench/import-floor.ts: the work an
// import cannot avoid), in BENCH_ROUNDS rounds (2 by default). Each round imports the file, then
// the same file under another name with --allow-repeats (every row a repeat), and runs the floor;
// it prints each one's time, peak RSS and the Redis bytes a row of its campaign costs, then the
// ratios to the floor over the rounds (median and spread) with the load average.
// BENCH_ONLY=pg runs the same rounds with PostgreSQL as the store (the journal, the paid memory).
// Then an .xlsx of the same rows (BENCH_XLSX_ROWS, 100,000 by default; written by exceljs's
// streaming writer as Excel saves one: shared strings, face values as numbers), imported and
// compared with the import of a CSV of those same rows; then an .ods of those rows (as
// LibreOffice saves one: typed cells, each row's unused columns one repeated empty cell) beside
// them. Then zip bombs refused (see bombPart).
// BENCH_ONLY=csv|pg|xlsx|ods|bomb (or several, comma-separated) runs those parts; by default
// every part but pg (BENCH_PG=1 adds it).
// Each side runs in a fresh child process (test/helpers/bench-child.ts), so its peak RSS is its
// own, as `giftjobs orders import` would have it; the Redis CPU each cost is printed beside.

import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { openDatabase } from "../../src/db/open-database.js";
import { UserError } from "../../src/errors/user-error.js";
import { limitHeapGrowthForImport } from "../../src/import/heap-growth.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import {
  CHILD_RUNTIME,
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
} from "../helpers/bench-child.js";
import { figure, figureNote } from "../helpers/bench-figures.js";
import { loadAverage, spread } from "../helpers/bench-stats.js";
import { exited, spawnCli } from "../helpers/cli.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { createTestDatabase, dropTestDatabase, TEST_DATABASE_URL } from "../helpers/database.js";
import { writeLargeOds } from "../helpers/ods.js";
import { cleanPrefix, redisCpuSeconds, testRedis, uniquePrefix } from "../helpers/redis.js";
import { writeLargeXlsx } from "../helpers/xlsx.js";
import { writeXlsxBomb } from "../helpers/zip-bomb.js";
import { importFloor } from "./import-floor.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? Math.min(ROWS, 100_000));
const ONLY = process.env.BENCH_ONLY;
const PG_BY_DEFAULT = process.env.BENCH_PG === "1";
/** The goals of the .xlsx import: its peak RSS, and its rows/s as a share of the CSV's. */
const XLSX_MAX_RSS = 300 * 2 ** 20;
const XLSX_MIN_SHARE = 0.9;
const SELF = fileURLToPath(import.meta.url);
const PRODUCTS = 5000;

interface ChildReport extends ChildMeasure {
  rows: number;
}

/** What a measuring child is told: its kind, files, Redis prefix, and the import's own. */
interface ChildTask {
  kind: "import" | "floor" | "refusal";
  dataDir: string;
  file: string;
  prefix: string;
  /** Where the import's journal and paid memory (or the floor's two files) go. */
  records: string;
  campaign: string;
  allowRepeats: boolean;
  /** A PostgreSQL schema, migrated: the journal and paid memory go there instead. */
  schema?: string;
}

/** Child side: the import, the floor, or a refusal (a dry run of a file that must be refused). */
async function measure(task: ChildTask): Promise<void> {
  const redis = testRedis();
  try {
    if (task.kind === "floor") {
      const { prefix, records: dir, campaign } = task;
      await measureInChild(async () => ({
        rows: await importFloor(task.file, { redis, prefix, dir, campaign }),
      }));
      return;
    }
    // As `orders import` sets it for its process before it begins.
    limitHeapGrowthForImport();
    const catalog = (await loadCurrentIndex(task.dataDir))!;
    const ledger = new Ledger(redis, task.prefix);
    const database = task.schema
      ? await openDatabase({ databaseUrl: TEST_DATABASE_URL, databaseSchema: task.schema })
      : undefined;
    // The round's data dir, or PostgreSQL: as `orders import` opens them.
    const stores = database ? pgStores(task.records, database) : fileStores(task.records);
    try {
      await measureInChild(() => importOnce(task, { ledger, catalog, stores }));
    } finally {
      await stores.close();
    }
  } finally {
    await redis.quit();
  }
}

/**
 * One import as `orders import` runs it, with the order journal and the paid memory
 * (docs/architecture/repeats.md) under the round's data dir, or in PostgreSQL.
 */
async function importOnce(
  task: ChildTask,
  deps: Pick<ImportDeps, "ledger" | "catalog" | "stores">,
): Promise<{ rows: number }> {
  const base = { ...deps, log: silentLogger };
  if (task.kind === "refusal") {
    const options = { file: task.file, campaign: "bench", dryRun: true, balanceCheck: false };
    const refused = await importCampaign(options, base).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (!(refused instanceof UserError)) throw refused ?? new Error(`${task.file} was imported`);
    return { rows: 0 };
  }
  const result = await importCampaign(
    {
      file: task.file,
      campaign: task.campaign,
      balanceCheck: false,
      ...(task.allowRepeats ? { allowRepeats: true } : {}),
    },
    base,
  );
  return { rows: result.enqueued };
}

type Measured = ChildReport & { redisCpu: number; redisBytes: number };

/** Where a measurement runs: its Redis prefix and records, kept for the round's next import. */
interface Place {
  prefix: string;
  records: string;
  schema?: string;
}

/**
 * One measurement in a fresh child, with the Redis CPU it cost and the bytes its campaign's keys
 * hold after it (the floor's: its rows' hash).
 */
async function measureOnce(
  script: string,
  task: Omit<ChildTask, "prefix" | "records" | "schema">,
  place: Place,
  expected: { rows: number; redis: Redis },
): Promise<Measured> {
  const { redis } = expected;
  const before = await redisCpuSeconds(redis);
  const report = await runChild<ChildReport>(script, {
    BENCH_IMPORT_TASK: JSON.stringify({ ...task, ...place }),
  });
  if (report.rows !== expected.rows)
    throw new Error(`${task.kind}: ${report.rows} rows, expected ${expected.rows}`);
  const redisCpu = (await redisCpuSeconds(redis)) - before;
  const pattern =
    task.kind === "floor"
      ? `${place.prefix}:floor:*`
      : `${place.prefix}:campaign:${task.campaign}:*`;
  return { ...report, redisCpu, redisBytes: await keysBytes(redis, pattern) };
}

/** Bytes Redis holds for the keys matching `pattern` (MEMORY USAGE, every field counted). */
async function keysBytes(redis: Redis, pattern: string): Promise<number> {
  let bytes = 0;
  for await (const keys of redis.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<
    string[]
  >)
    for (const key of keys)
      bytes += Number((await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);
  return bytes;
}

/** A place of its own (prefix, records folder; a migrated schema with `pg`), gone after `fn`. */
async function inPlace<T>(
  label: string,
  redis: Redis,
  pg: boolean,
  fn: (place: Place) => Promise<T>,
): Promise<T> {
  const prefix = uniquePrefix(`bench-${label}`);
  const records = await mkdtemp(join(tmpdir(), "bench-records-"));
  const database = pg ? await createTestDatabase(`bench_${label}`) : undefined;
  try {
    return await fn({ prefix, records, ...(database ? { schema: database.schema } : {}) });
  } finally {
    await cleanPrefix(redis, prefix);
    await rm(records, { recursive: true, force: true });
    if (database) await dropTestDatabase(database);
  }
}

/** Both files' rows: 16 products, references bench-0, bench-1... */
const ROW_SHAPE = { products: 16, referencePrefix: "bench-" };

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

const verdict = (met: boolean) => (met ? "met" : "MISSED");

function printTable(title: string, lines: [string, Measured][]): void {
  const width = Math.max(10, ...lines.map(([name]) => name.length + 2));
  const table = [
    ["", "time", "rows/s", "peak RSS", "start RSS", "CPU", "GC", "Redis CPU", "Redis B/row"],
    ...lines.map(([name, r]) => [
      name,
      seconds(r.ms),
      perSecond(r.rows, r.ms).toLocaleString("en-US"),
      mb(r.maxRss),
      mb(r.startRss),
      seconds(r.cpuMs),
      seconds(r.gcMs),
      seconds(r.redisCpu * 1000),
      r.rows > 0 ? String(Math.round(r.redisBytes / r.rows)) : "-",
    ]),
  ];
  for (const row of table)
    process.stdout.write(`${row.map((c, i) => c.padEnd(i === 0 ? width : 12)).join("")}\n`);
  figure(title, table);
}

/** One round: the floor, the first import of a file, then the same file under another name. */
interface Round {
  floor: Measured;
  first: Measured;
  repeat: Measured;
}

/**
 * A round in a place of its own: the floor, the file imported as `first`, then again as `again`
 * with --allow-repeats (each of its rows a repeat of one of the first's, marked on its row).
 */
async function oneRound(
  script: string,
  files: { dataDir: string; file: string; rows: number },
  redis: Redis,
  pg: boolean,
): Promise<Round> {
  const { dataDir, file, rows } = files;
  const expected = { rows, redis };
  const task = (campaign: string, allowRepeats: boolean) =>
    ({ kind: "import", dataDir, file, campaign, allowRepeats }) as const;
  const floor = await inPlace("floor", redis, false, (place) =>
    measureOnce(script, { ...task("floor", false), kind: "floor" }, place, expected),
  );
  return inPlace(pg ? "pg" : "csv", redis, pg, async (place) => ({
    floor,
    first: await measureOnce(script, task("first", false), place, expected),
    repeat: await measureOnce(script, task("again", true), place, expected),
  }));
}

/** The rounds' table and ratios to the floor: time and peak RSS, median and spread. */
function printRounds(label: string, rounds: Round[]): void {
  for (const [i, r] of rounds.entries()) {
    const title = `${label}, round ${i + 1} (${loadAverage()} after)`;
    process.stdout.write(`${title}:\n`);
    printTable(title, [
      ["import", r.first],
      ["repeat (--allow-repeats)", r.repeat],
      ["floor", r.floor],
    ]);
  }
  const ratio = (pick: (r: Round) => Measured, field: "ms" | "maxRss") =>
    rounds.map((r) => pick(r)[field] / r.floor[field]);
  const lines: [string, number[], number][] = [
    ["import / floor, time", ratio((r) => r.first, "ms"), 2],
    ["import / floor, peak RSS", ratio((r) => r.first, "maxRss"), 1.5],
    ["repeat / floor, time", ratio((r) => r.repeat, "ms"), 2],
    ["repeat / floor, peak RSS", ratio((r) => r.repeat, "maxRss"), 1.5],
    ["repeat / import, time", rounds.map((r) => r.repeat.ms / r.first.ms), 1.5],
    ["repeat / import, peak RSS", rounds.map((r) => r.repeat.maxRss / r.first.maxRss), 1.5],
  ];
  const ratios = lines.map(
    ([name, values, goal]) =>
      `${name}: ${spread(values)} (goal <= ${goal}x: ${verdict(Math.max(...values) <= goal)})`,
  );
  for (const line of ratios) process.stdout.write(`${line}\n`);
  figure(`${label}: ratios over ${rounds.length} rounds`, [], ratios);
}

/** The CSV import beside the floor, over ROWS rows, ROUNDS rounds (files, or PostgreSQL). */
async function csvPart(
  script: string,
  dataDir: string,
  redis: Redis,
  pg = false,
): Promise<Measured> {
  const files = { dataDir, file: join(dataDir, "orders.csv"), rows: ROWS };
  const rounds: Round[] = [];
  process.stdout.write(
    `${pg ? "PostgreSQL as the store" : "files as the store"}, ${loadAverage()} before\n`,
  );
  for (let i = 0; i < ROUNDS; i += 1) rounds.push(await oneRound(script, files, redis, pg));
  printRounds(pg ? "PostgreSQL" : "CSV", rounds);
  return rounds[rounds.length - 1]!.first;
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
  const expected = { rows: XLSX_ROWS, redis };
  const importOf = (file: string) =>
    inPlace("xlsx", redis, false, (place) =>
      measureOnce(
        script,
        { kind: "import", dataDir, file, campaign: "bench", allowRepeats: false },
        place,
        expected,
      ),
    );
  let csv = csvImporter;
  if (csv === undefined || ROWS !== XLSX_ROWS) {
    const same = join(dataDir, "orders-xlsx-rows.csv");
    await writeLargeCsv(index, same, XLSX_ROWS, ROW_SHAPE);
    csv = await importOf(same);
  }
  const measured = await importOf(xlsx);
  const title = `.xlsx of the same ${XLSX_ROWS.toLocaleString("en-US")} rows (${mb((await stat(xlsx)).size)}), ${loadAverage()} after`;
  process.stdout.write(`\n${title}:\n`);
  printTable(title, [
    ["xlsx importer", measured],
    ["csv importer", csv],
  ]);
  const share = perSecond(measured.rows, measured.ms) / perSecond(csv.rows, csv.ms);
  const verdicts =
    `xlsx rows/s ${share.toFixed(2)} of the CSV's (goal >= ${XLSX_MIN_SHARE}: ${verdict(share >= XLSX_MIN_SHARE)}); ` +
    `xlsx peak RSS ${mb(measured.maxRss)} (goal < 300 MB: ${verdict(measured.maxRss < XLSX_MAX_RSS)})`;
  process.stdout.write(`${verdicts}\n`);
  figureNote(verdicts);
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
  const measured = await inPlace("ods", redis, false, (place) =>
    measureOnce(
      script,
      { kind: "import", dataDir, file: ods, campaign: "bench", allowRepeats: false },
      place,
      { rows: XLSX_ROWS, redis },
    ),
  );
  const title = `.ods of the same ${XLSX_ROWS.toLocaleString("en-US")} rows (${mb((await stat(ods)).size)})`;
  process.stdout.write(`\n${title}:\n`);
  printTable(title, [["ods importer", measured], ...others]);
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
  const refusal = (file: string) =>
    inPlace("refusal", redis, false, (place) =>
      measureOnce(
        script,
        { kind: "refusal", dataDir, file, campaign: "bench", allowRepeats: false },
        place,
        { rows: 0, redis },
      ),
    );
  const lines: [string, Measured][] = [
    ["bomb, stated", await refusal(stated)],
    ["bomb, understated", await refusal(understated)],
  ];
  if (xlsxImporter) lines.push(["xlsx importer", xlsxImporter]);
  const title = `zip bombs of 300 MB (${mb((await stat(stated)).size)}) refused`;
  process.stdout.write(`\n${title}:\n`);
  printTable(title, lines);
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
    const runs = (part: string) =>
      ONLY === undefined ? part !== "pg" || PG_BY_DEFAULT : ONLY.split(",").includes(part);
    let csvImporter: Measured | undefined;
    if (runs("csv") || runs("pg"))
      await writeLargeCsv(index, join(dataDir, "orders.csv"), ROWS, ROW_SHAPE);
    if (runs("csv")) csvImporter = await csvPart(script, dataDir, redis);
    if (runs("pg")) await csvPart(script, dataDir, redis, true);
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

const childTask = process.env.BENCH_IMPORT_TASK;
if (childTask) await measure(JSON.parse(childTask) as ChildTask);
