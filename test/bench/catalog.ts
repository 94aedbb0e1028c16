// Benchmark of the catalog sync: 100,000 products from a sandbox in a child process (so that the
// server does not share an event loop with the client), against the floor of fetching the same
// pages raw.
//
// Each measurement runs in a fresh child process of its own (test/helpers/bench-child.ts): the
// sync in one, the floor in another.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "../../src/api/client.js";
import { receivePage } from "../../src/catalog/catalog-page.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import {
  CHILD_RUNTIME,
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
} from "../helpers/bench-child.js";
import { printFigure, printNotes } from "../helpers/bench-figures.js";
import { loadAverage, spread } from "../helpers/bench-stats.js";
import {
  CATALOG_ROUNDS,
  mb,
  type PageRead,
  parsePage,
  seconds,
  startSandboxChild,
  walkPages,
} from "../helpers/catalog-bench.js";
import { median } from "../helpers/median.js";
import { runPostgres } from "./catalog-pg.js";

const SELF = fileURLToPath(import.meta.url);

/** What a measuring child reports on its last stdout line. */
interface ChildReport extends ChildMeasure {
  pages: number;
  /** Products (sync only). */
  products?: number;
  /** products.json bytes (sync only). */
  bytes?: number;
}

/**
 * The floor: sequential cursor pages over the client's own transport (node:http keep-alive,
 * cheaper than fetch) and JSON.parse, nothing kept: what a hand-written script does.
 *
 * With `cursorOnly`, the stricter floor: each page's cursor is read from the pagination at its
 * end, as the sync does before parsing products, and the products are never parsed, so this is
 * about the time the service takes to answer. Printed beside the goal's floor so that the
 * reader sees both.
 */
async function rawFetch(url: string, cursorOnly: boolean): Promise<{ pages: number }> {
  return { pages: await walkPages(url, cursorOnly ? cursorOf : parseWhole) };
}

function parseWhole(bytes: Buffer): PageRead {
  const page = parsePage(bytes);
  return { empty: page.catalog.length === 0, after: page.pagination.cursors.after };
}

/** The cursor as the sync reads it first (receivePage): the products are not parsed. */
function cursorOf(bytes: Buffer): PageRead {
  const page = receivePage(bytes, { number: 0, requestedAfter: undefined, apiVersion: null });
  return { empty: page.empty, after: page.after };
}

/** Child side: one measurement, reported as JSON on stdout. */
async function measure(kind: string, url: string, dataDir: string): Promise<void> {
  await measureInChild(async () => {
    if (kind === "floor" || kind === "cursor-floor") return rawFetch(url, kind === "cursor-floor");
    const client = new ApiClient({ baseUrl: url, apiKey: "bench" });
    const { manifest } = await syncCatalog({ client, dataDir, keep: 2 });
    return {
      pages: manifest.pages,
      products: manifest.product_count,
      bytes: manifest.products_bytes,
    };
  });
}

function measureOnce(
  script: string,
  kind: "floor" | "cursor-floor" | "sync",
  url: string,
  dataDir: string,
) {
  return runChild<ChildReport>(script, {
    BENCH_CATALOG_CHILD: kind,
    BENCH_CATALOG_URL: url,
    BENCH_CATALOG_DIR: dataDir,
  });
}

export async function run(): Promise<void> {
  const script = await childScript(SELF);
  const sandbox = await startSandboxChild();
  const { url } = sandbox;
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-catalog-"));
  try {
    // BENCH_ONLY=postgres: the PostgreSQL run alone.
    if (process.env.BENCH_ONLY !== "postgres") await runFiles(script, url, dataDir);
    // The PostgreSQL run (catalog-pg.ts) on the same sandbox; BENCH_ONLY=files leaves it out.
    if (process.env.BENCH_ONLY !== "files") await runPostgres(url);
  } finally {
    sandbox.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The file store's rounds: the sync against the floor and the cursor-only floor. */
async function runFiles(script: string, url: string, dataDir: string): Promise<void> {
  await measureOnce(script, "floor", url, dataDir); // warm-up: the server's JIT and caches
  process.stdout.write(`children run ${CHILD_RUNTIME === "tsx" ? "under tsx" : "compiled JS"}\n`);
  const ratios: number[] = [];
  const cursorRatios: number[] = [];
  const syncRss: number[] = [];
  const floorRss: number[] = [];
  const rows = [
    [
      "round",
      "floor",
      "floor CPU",
      "floor peak RSS",
      "sync",
      "products",
      "on disk",
      "sync CPU",
      "sync RSS, start -> peak",
      "ratio",
      "cursor-only floor",
      "its CPU",
      "ratio to it",
    ],
  ];
  for (let round = 1; round <= CATALOG_ROUNDS; round++) {
    const floor = await measureOnce(script, "floor", url, dataDir);
    const cursorFloor = await measureOnce(script, "cursor-floor", url, dataDir);
    // Round 1 has no previous snapshot; later rounds diff against 100k previous records.
    const sync = await measureOnce(script, "sync", url, dataDir);
    const ratio = sync.ms / floor.ms;
    ratios.push(ratio);
    cursorRatios.push(sync.ms / cursorFloor.ms);
    syncRss.push(sync.maxRss);
    floorRss.push(floor.maxRss);
    rows.push([
      `${round}${round === 1 ? " (first snapshot)" : " (with diff)"}`,
      `${seconds(floor.ms)} (${floor.pages} pages)`,
      seconds(floor.cpuMs),
      mb(floor.maxRss),
      seconds(sync.ms),
      String(sync.products),
      mb(sync.bytes ?? 0),
      seconds(sync.cpuMs),
      `${mb(sync.startRss)} -> ${mb(sync.maxRss)}`,
      `${ratio.toFixed(2)}x`,
      seconds(cursorFloor.ms),
      seconds(cursorFloor.cpuMs),
      `${(sync.ms / cursorFloor.ms).toFixed(2)}x`,
    ]);
  }
  printFigure(`Files: the sync against the floor, ${CATALOG_ROUNDS} rounds`, rows);
  printNotes([
    `${loadAverage()} after the rounds`,
    `ratio ${spread(ratios)}, worst ${Math.max(...ratios).toFixed(2)}x (goal <= 1.20x); ` +
      `sync peak RSS median ${mb(median(syncRss))}, worst ${mb(Math.max(...syncRss))} (goal <= 200 MB); ` +
      `floor peak RSS median ${mb(median(floorRss))}`,
    "ratio to the cursor-only floor (the service's own answer time): " +
      `${spread(cursorRatios)}, worst ${Math.max(...cursorRatios).toFixed(2)}x`,
  ]);
}

const childKind = process.env.BENCH_CATALOG_CHILD;
if (childKind) {
  await measure(
    childKind,
    process.env.BENCH_CATALOG_URL ?? "",
    process.env.BENCH_CATALOG_DIR ?? "",
  );
}
