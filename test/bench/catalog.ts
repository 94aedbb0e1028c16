// Benchmark of the catalog sync: 100,000 products from a sandbox in a child process (so that the
// server does not share this event loop), against the floor of fetching the same pages raw.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "../../src/api/client.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";

const PRODUCTS = Number(process.env.BENCH_CATALOG_PRODUCTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SANDBOX = `import("./src/sandbox/index.ts").then(async (m) => {
  const sandbox = await m.startSandbox({ products: ${PRODUCTS}, seed: 42, port: 0 });
  process.stdout.write(sandbox.url + "\\n");
})`;

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

/** The floor: sequential cursor pages, plain fetch and JSON.parse, nothing kept. */
async function rawFetch(url: string): Promise<{ ms: number; products: number; pages: number }> {
  const started = performance.now();
  let after: string | undefined;
  let products = 0;
  let pages = 0;
  for (;;) {
    const query = new URLSearchParams({ limit: "500" });
    if (after) query.set("after", after);
    const response = await fetch(`${url}/v2/product?${query}`, {
      headers: { "x-api-key": "bench", accept: "application/json" },
    });
    const page = JSON.parse(await response.text()) as {
      catalog: unknown[];
      pagination: { cursors: { after?: string } };
    };
    if (page.catalog.length === 0) break;
    products += page.catalog.length;
    pages += 1;
    after = page.pagination.cursors.after;
  }
  return { ms: performance.now() - started, products, pages };
}

/** Peak RSS while `fn` runs, sampled every 50 ms. */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakRss: number }> {
  let peakRss = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  try {
    const value = await fn();
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    return { value, peakRss };
  } finally {
    clearInterval(timer);
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function run(): Promise<void> {
  const { url, child } = await startChildSandbox();
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-catalog-"));
  const client = new ApiClient({ baseUrl: url, apiKey: "bench" });
  try {
    await rawFetch(url); // warm-up: JIT, keep-alive connection, the server's own caches
    // tsx and the module graph alone take a good part of the RSS; show it beside the peaks.
    const baseline = process.memoryUsage().rss;
    process.stdout.write(`RSS before the first sync: ${mb(baseline)}\n`);
    let worst = { ratio: 0, peakRss: 0 };
    let best = Number.POSITIVE_INFINITY;
    for (let round = 1; round <= ROUNDS; round++) {
      const floor = await rawFetch(url);
      // Round 1 has no previous snapshot; later rounds diff against 100k previous records.
      const { value: sync, peakRss } = await withPeakRss(async () => {
        const started = performance.now();
        const result = await syncCatalog({ client, dataDir, keep: 2 });
        return { ms: performance.now() - started, result };
      });
      const ratio = sync.ms / floor.ms;
      worst = { ratio: Math.max(worst.ratio, ratio), peakRss: Math.max(worst.peakRss, peakRss) };
      best = Math.min(best, ratio);
      process.stdout.write(
        `round ${round}${round === 1 ? " (first snapshot)" : " (with diff)   "}: ` +
          `floor ${s(floor.ms)} (${floor.pages} pages), sync ${s(sync.ms)} ` +
          `(${sync.result.manifest.product_count} products, ${mb(sync.result.manifest.products_bytes)} on disk), ` +
          `ratio ${ratio.toFixed(2)}x, peak RSS ${mb(peakRss)}\n`,
      );
    }
    process.stdout.write(
      `ratio best ${best.toFixed(2)}x, worst ${worst.ratio.toFixed(2)}x (goal <= 1.20x); ` +
        `peak RSS ${mb(worst.peakRss)} (goal <= 200 MB); ` +
        `maxRSS of the process ${mb(process.resourceUsage().maxRSS * 1024)}\n`,
    );
  } finally {
    child.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}
