// The PostgreSQL run of `npm run bench -- catalog` (docs/catalog-database.md): syncing the
// sandbox's 100,000 products into the database, against a floor that fetches the same pages and
// COPYs each product's raw record into one table, in one transaction; then the time of the two
// documented queries (docs/catalog-database.md, "The views") on 100,000 products.
//
// Each measurement runs in a fresh child process (test/helpers/bench-child.ts), in a schema of
// its own that is dropped at the end. PostgreSQL: GIFTJOBS_TEST_DATABASE_URL, as the tests.
import { fileURLToPath } from "node:url";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { ApiClient } from "../../src/api/client.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { databaseCatalogStore } from "../../src/db/catalog-store.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open-database.js";
import {
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
} from "../helpers/bench-child.js";
import { printFigure, printNotes } from "../helpers/bench-figures.js";
import { loadAverage, spread } from "../helpers/bench-stats.js";
import {
  CATALOG_PRODUCTS,
  mb,
  PG_ROUNDS,
  parsePage,
  seconds,
  startSandboxChild,
  walkPages,
} from "../helpers/catalog-bench.js";
import { TEST_DATABASE_URL, uniqueSchema } from "../helpers/database.js";
import { median } from "../helpers/median.js";

const SELF = fileURLToPath(import.meta.url);
const QUERY_RUNS = 20;

interface Report extends ChildMeasure {
  pages: number;
  products?: number;
}

/** Floor: the same pages, parsed, each product's JSON COPYed as one jsonb row; one transaction. */
async function floor(url: string, schema: string): Promise<{ pages: number; products: number }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(`TRUNCATE "${schema}".raw_products`);
    const copy = client.query(copyFrom(`COPY "${schema}".raw_products (record) FROM STDIN`));
    const done = new Promise<void>((resolve, reject) => {
      copy.on("finish", resolve);
      copy.on("error", reject);
    });
    let products = 0;
    const pages = await walkPages(url, async (bytes) => {
      const page = parsePage(bytes);
      if (page.catalog.length === 0) return { empty: true };
      let lines = "";
      for (const product of page.catalog) {
        lines += `${JSON.stringify(product).replace(/\\/g, "\\\\")}\n`;
      }
      products += page.catalog.length;
      if (!copy.write(lines)) await new Promise((resolve) => copy.once("drain", resolve));
      return { empty: false, after: page.pagination.cursors.after };
    });
    copy.end();
    await done;
    await client.query("COMMIT");
    return { pages, products };
  } finally {
    await client.end();
  }
}

async function sync(url: string, schema: string): Promise<{ pages: number; products: number }> {
  const database = await openDatabase({ databaseUrl: TEST_DATABASE_URL, databaseSchema: schema });
  try {
    const client = new ApiClient({ baseUrl: url, apiKey: "bench" });
    const { manifest } = await syncCatalog({
      client,
      dataDir: "",
      store: databaseCatalogStore("", database),
      keep: 2,
    });
    return { pages: manifest.pages, products: manifest.product_count };
  } finally {
    await database.close();
  }
}

function measureOnce(script: string, kind: "pg-floor" | "pg-sync", url: string, schema: string) {
  return runChild<Report>(script, {
    BENCH_CATALOG_PG_CHILD: kind,
    BENCH_CATALOG_URL: url,
    BENCH_CATALOG_PG_SCHEMA: schema,
  });
}

/** Changes `count` products' is_orderable in the sandbox, so the next sync has changes to keep. */
async function changeProducts(url: string, count: number, round: number): Promise<void> {
  const codes: string[] = [];
  let after: string | undefined;
  while (codes.length < count) {
    const query = new URLSearchParams({ limit: "500", ...(after ? { after } : {}) });
    const page = (await (
      await fetch(`${url}/v2/product?${query}`, { headers: { "x-api-key": "bench" } })
    ).json()) as { catalog: { code: string }[]; pagination: { cursors: { after?: string } } };
    if (page.catalog.length === 0) break;
    codes.push(...page.catalog.map((p) => p.code));
    after = page.pagination.cursors.after;
  }
  // One edit of many products (POST /_sandbox/catalog's mutate), not a request each.
  const update = codes.slice(0, count).map((code) => ({ code, is_orderable: round % 2 === 1 }));
  await fetch(`${url}/_sandbox/catalog`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mutate: { update } }),
  });
}

/** The documented queries' times (ms), each the median of QUERY_RUNS runs. */
async function queryTimes(
  schema: string,
): Promise<{ country: number; since: number; rows: number[] }> {
  const database = await openDatabase({ databaseUrl: TEST_DATABASE_URL, databaseSchema: schema });
  try {
    const time = async (text: string, values: unknown[]) => {
      const ms: number[] = [];
      let rows = 0;
      for (let i = 0; i < QUERY_RUNS; i++) {
        const started = performance.now();
        rows = (await database.pool.query(text, values)).rowCount ?? 0;
        ms.push(performance.now() - started);
      }
      return { ms: median(ms), rows };
    };
    const country = await time(
      `SELECT code, name, currency, min_value, max_value, denominations FROM current_products
        WHERE countries @> ARRAY[$1] AND is_orderable ORDER BY code`,
      ["GB"],
    );
    const since = await time(
      `SELECT synced_at, code, name FROM recent_changes
        WHERE synced_at >= $1 AND field = 'is_orderable' AND new_value = 'false'
        ORDER BY synced_at, code`,
      [new Date(Date.now() - 86_400_000).toISOString()],
    );
    return { country: country.ms, since: since.ms, rows: [country.rows, since.rows] };
  } finally {
    await database.close();
  }
}

/**
 * `npm run bench -- catalog-pg`: the PostgreSQL run alone, on a sandbox of its own, as
 * `BENCH_ONLY=postgres npm run bench -- catalog` runs it.
 */
export async function run(): Promise<void> {
  const sandbox = await startSandboxChild();
  try {
    await runPostgres(sandbox.url);
  } finally {
    sandbox.stop();
  }
}

/** The PostgreSQL run against the sandbox at `url` (its catalog already generated). */
export async function runPostgres(url: string, rounds = PG_ROUNDS): Promise<void> {
  const schema = uniqueSchema("bench");
  const database = await openDatabase({ databaseUrl: TEST_DATABASE_URL, databaseSchema: schema });
  try {
    await migrate(database);
    await database.pool.query(`CREATE TABLE "${schema}".raw_products (record jsonb NOT NULL)`);
    const script = await childScript(SELF);
    await measureOnce(script, "pg-floor", url, schema); // warm-up
    const ratios: number[] = [];
    const rss: number[] = [];
    const rows = [
      ["round", "floor", "floor CPU", "floor peak RSS", "sync", "products", "sync CPU"].concat([
        "sync RSS, start -> peak",
        "ratio",
      ]),
    ];
    for (let round = 1; round <= rounds; round++) {
      // From round 2 on, 2,000 products changed since the last sync: a diff with changes to keep.
      if (round > 1) await changeProducts(url, 2000, round);
      const f = await measureOnce(script, "pg-floor", url, schema);
      const y = await measureOnce(script, "pg-sync", url, schema);
      ratios.push(y.ms / f.ms);
      rss.push(y.maxRss);
      rows.push([
        `${round}${round === 1 ? " (first snapshot)" : " (with diff)"}`,
        `${seconds(f.ms)} (${f.pages} pages)`,
        seconds(f.cpuMs),
        mb(f.maxRss),
        seconds(y.ms),
        String(y.products),
        seconds(y.cpuMs),
        `${mb(y.startRss)} -> ${mb(y.maxRss)}`,
        `${(y.ms / f.ms).toFixed(2)}x`,
      ]);
    }
    printFigure(`PostgreSQL: the sync against the floor, ${rounds} rounds`, rows);
    const q = await queryTimes(schema);
    printNotes([
      `${loadAverage()} after the rounds`,
      `ratio ${spread(ratios)}, worst ${Math.max(...ratios).toFixed(2)}x (goal <= 1.30x); ` +
        `sync peak RSS median ${mb(median(rss))}, worst ${mb(Math.max(...rss))} (goal < 250 MB)`,
    ]);
    printFigure(
      `PostgreSQL: the documented queries on ${rounds > 0 ? CATALOG_PRODUCTS.toLocaleString("en-US") : "0"} products, median of ${QUERY_RUNS}`,
      [
        ["query", "time", "rows", "goal"],
        [
          "current products of a country",
          `${q.country.toFixed(1)} ms`,
          String(q.rows[0]),
          "< 50 ms",
        ],
        ["changes since a date", `${q.since.toFixed(1)} ms`, String(q.rows[1]), "< 50 ms"],
      ],
    );
  } finally {
    await database.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await database.close();
  }
}

const childKind = process.env.BENCH_CATALOG_PG_CHILD;
if (childKind) {
  const url = process.env.BENCH_CATALOG_URL ?? "";
  const schema = process.env.BENCH_CATALOG_PG_SCHEMA ?? "";
  await measureInChild(() => (childKind === "pg-floor" ? floor(url, schema) : sync(url, schema)));
}
