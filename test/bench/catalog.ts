// Benchmark of the catalog sync: 100,000 products from a sandbox in a child process (so that the
// server does not share an event loop with the client), against the floor of fetching the same
// pages raw.
//
// Each measurement runs in a fresh child process of its own (test/helpers/bench-child.ts): the
// sync in one, the floor in another.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "../../src/api/client.js";
import { httpTransport } from "../../src/api/transport.js";
import { receivePage } from "../../src/catalog/catalog-page.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import {
  CHILD_RUNTIME,
  type ChildMeasure,
  childScript,
  measureInChild,
  runChild,
} from "../helpers/bench-child.js";
import { median } from "../helpers/median.js";
import { runPostgres } from "./catalog-pg.js";

const PRODUCTS = Number(process.env.BENCH_CATALOG_PRODUCTS ?? 100_000);
// Five rounds: on two cores one round's ratio moves by 0.3x with whatever else runs; the median
// of five is what the goal is judged by.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const SANDBOX = `import("./src/sandbox/index.ts").then(async (m) => {
  const sandbox = await m.startSandbox({ products: ${PRODUCTS}, seed: 42, port: 0 });
  process.stdout.write(sandbox.url + "\\n");
})`;

/** What a measuring child reports on its last stdout line. */
interface ChildReport extends ChildMeasure {
  pages: number;
  /** Products (sync only). */
  products?: number;
  /** products.json bytes (sync only). */
  bytes?: number;
}

async function startChildSandbox(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", "-e", SANDBOX], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return { url, child };
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
  const transport = httpTransport();
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const query = new URLSearchParams({ limit: "500" });
    if (after) query.set("after", after);
    const response = await transport({
      method: "GET",
      url: new URL(`${url}/v2/product?${query}`),
      headers: { "x-api-key": "bench", accept: "application/json" },
      timeoutMs: 30_000,
    });
    const page = cursorOnly ? cursorOf(response.bytes) : parseWhole(response.bytes);
    if (page.empty) break;
    pages += 1;
    after = page.after;
  }
  return { pages };
}

function parseWhole(bytes: Buffer): { empty: boolean; after?: string } {
  const page = JSON.parse(bytes.toString("utf8")) as {
    catalog: unknown[];
    pagination: { cursors: { after?: string } };
  };
  return { empty: page.catalog.length === 0, after: page.pagination.cursors.after };
}

/** The cursor as the sync reads it first (receivePage): the products are not parsed. */
function cursorOf(bytes: Buffer): { empty: boolean; after?: string } {
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

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export async function run(): Promise<void> {
  const script = await childScript(SELF);
  const { url, child } = await startChildSandbox();
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-catalog-"));
  try {
    // BENCH_ONLY=postgres: the PostgreSQL run alone.
    if (process.env.BENCH_ONLY !== "postgres") await runFiles(script, url, dataDir);
    // The PostgreSQL run (catalog-pg.ts) on the same sandbox; BENCH_ONLY=files leaves it out.
    if (process.env.BENCH_ONLY !== "files") {
      await runPostgres(url, Number(process.env.BENCH_PG_ROUNDS ?? ROUNDS));
    }
  } finally {
    child.kill();
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
  for (let round = 1; round <= ROUNDS; round++) {
    const floor = await measureOnce(script, "floor", url, dataDir);
    const cursorFloor = await measureOnce(script, "cursor-floor", url, dataDir);
    // Round 1 has no previous snapshot; later rounds diff against 100k previous records.
    const sync = await measureOnce(script, "sync", url, dataDir);
    const ratio = sync.ms / floor.ms;
    ratios.push(ratio);
    cursorRatios.push(sync.ms / cursorFloor.ms);
    syncRss.push(sync.maxRss);
    floorRss.push(floor.maxRss);
    process.stdout.write(
      `round ${round}${round === 1 ? " (first snapshot)" : " (with diff)   "}: ` +
        `floor ${s(floor.ms)} (${floor.pages} pages, cpu ${s(floor.cpuMs)}, ` +
        `RSS ${mb(floor.startRss)} -> peak ${mb(floor.maxRss)}), ` +
        `sync ${s(sync.ms)} (${sync.products} products, ${mb(sync.bytes ?? 0)} on disk, ` +
        `cpu ${s(sync.cpuMs)}, RSS ${mb(sync.startRss)} -> peak ${mb(sync.maxRss)}), ` +
        `ratio ${ratio.toFixed(2)}x; cursor-only floor ${s(cursorFloor.ms)} ` +
        `(cpu ${s(cursorFloor.cpuMs)}), ratio to it ${(sync.ms / cursorFloor.ms).toFixed(2)}x\n`,
    );
  }
  process.stdout.write(
    `ratio median ${median(ratios).toFixed(2)}x, worst ${Math.max(...ratios).toFixed(2)}x (goal <= 1.20x); ` +
      `sync peak RSS median ${mb(median(syncRss))}, worst ${mb(Math.max(...syncRss))} (goal <= 200 MB); ` +
      `floor peak RSS median ${mb(median(floorRss))}\n` +
      `ratio to the cursor-only floor (the service's own answer time): median ` +
      `${median(cursorRatios).toFixed(2)}x, worst ${Math.max(...cursorRatios).toFixed(2)}x\n`,
  );
}

const childKind = process.env.BENCH_CATALOG_CHILD;
if (childKind) {
  await measure(
    childKind,
    process.env.BENCH_CATALOG_URL ?? "",
    process.env.BENCH_CATALOG_DIR ?? "",
  );
}
