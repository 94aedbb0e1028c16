// Benchmark of the catalog sync: 100,000 products from a sandbox in a child process (so that the
// server does not share an event loop with the client), against the floor of fetching the same
// pages raw.
//
// Each measurement runs in a fresh child process of its own — the sync in one, the floor in
// another — so that neither inherits the other's heap, JIT state or connection, and each peak
// RSS is that child's own (process.resourceUsage().maxRSS at its end). Both children run this
// same file compiled to one JavaScript module (esbuild, npm packages left external), as the
// CLI runs compiled JS; they load the same module graph, so their baselines are comparable.
// BENCH_CATALOG_RUNTIME=tsx runs the children under tsx instead (about 40 MB more RSS each).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient } from "../../src/api/client.js";
import { httpTransport } from "../../src/api/transport.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { median } from "../helpers/median.js";

const PRODUCTS = Number(process.env.BENCH_CATALOG_PRODUCTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNTIME = process.env.BENCH_CATALOG_RUNTIME === "tsx" ? "tsx" : "compiled";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const SANDBOX = `import("./src/sandbox/index.ts").then(async (m) => {
  const sandbox = await m.startSandbox({ products: ${PRODUCTS}, seed: 42, port: 0 });
  process.stdout.write(sandbox.url + "\\n");
})`;

/** What a measuring child reports on its last stdout line. */
interface ChildReport {
  ms: number;
  pages: number;
  products: number;
  /** products.json bytes (sync only). */
  bytes?: number;
  /** RSS once the modules are loaded, before any work. */
  startRss: number;
  /** process.resourceUsage().maxRSS at the end, in bytes. */
  maxRss: number;
  /** User + system CPU of the measured part. */
  cpuMs: number;
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
 * cheaper than fetch) and JSON.parse, nothing kept.
 */
async function rawFetch(url: string): Promise<{ products: number; pages: number }> {
  const transport = httpTransport();
  let after: string | undefined;
  let products = 0;
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
    const page = JSON.parse(response.bytes.toString("utf8")) as {
      catalog: unknown[];
      pagination: { cursors: { after?: string } };
    };
    if (page.catalog.length === 0) break;
    products += page.catalog.length;
    pages += 1;
    after = page.pagination.cursors.after;
  }
  return { products, pages };
}

/** Child side: one measurement, reported as JSON on stdout. */
async function measure(kind: string, url: string, dataDir: string): Promise<void> {
  const startRss = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const started = performance.now();
  let report: Omit<ChildReport, "startRss" | "maxRss" | "cpuMs" | "ms">;
  if (kind === "floor") {
    report = await rawFetch(url);
  } else {
    const client = new ApiClient({ baseUrl: url, apiKey: "bench" });
    const { manifest } = await syncCatalog({ client, dataDir, keep: 2 });
    report = {
      pages: manifest.pages,
      products: manifest.product_count,
      bytes: manifest.products_bytes,
    };
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const maxRss = process.resourceUsage().maxRSS * 1024;
  const full: ChildReport = {
    ...report,
    ms,
    startRss,
    maxRss,
    cpuMs: (used.user + used.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(full)}\n`);
}

/** Compiles this file to one ES module next to node_modules, so npm packages still resolve. */
async function compileSelf(): Promise<string> {
  const dir = join(ROOT, "node_modules", ".cache", "giftjobs-bench");
  await mkdir(dir, { recursive: true });
  const outfile = join(dir, "catalog-child.mjs");
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [SELF],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return outfile;
}

async function runChild(
  script: string,
  kind: "floor" | "sync",
  url: string,
  dataDir: string,
): Promise<ChildReport> {
  const args = RUNTIME === "tsx" ? ["--import", "tsx", script] : [script];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      BENCH_CATALOG_CHILD: kind,
      BENCH_CATALOG_URL: url,
      BENCH_CATALOG_DIR: dataDir,
    },
  });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const last = out.trim().split("\n").pop();
  if (code !== 0 || !last) throw new Error(`${kind} child exited with ${code}: ${out}`);
  return JSON.parse(last) as ChildReport;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export async function run(): Promise<void> {
  const script = RUNTIME === "tsx" ? SELF : await compileSelf();
  const { url, child } = await startChildSandbox();
  const dataDir = await mkdtemp(join(tmpdir(), "gj-bench-catalog-"));
  try {
    await runChild(script, "floor", url, dataDir); // warm-up: the server's JIT and caches
    process.stdout.write(`children run ${RUNTIME === "tsx" ? "under tsx" : "compiled JS"}\n`);
    const ratios: number[] = [];
    const syncRss: number[] = [];
    const floorRss: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const floor = await runChild(script, "floor", url, dataDir);
      // Round 1 has no previous snapshot; later rounds diff against 100k previous records.
      const sync = await runChild(script, "sync", url, dataDir);
      const ratio = sync.ms / floor.ms;
      ratios.push(ratio);
      syncRss.push(sync.maxRss);
      floorRss.push(floor.maxRss);
      process.stdout.write(
        `round ${round}${round === 1 ? " (first snapshot)" : " (with diff)   "}: ` +
          `floor ${s(floor.ms)} (${floor.pages} pages, cpu ${s(floor.cpuMs)}, ` +
          `RSS ${mb(floor.startRss)} -> peak ${mb(floor.maxRss)}), ` +
          `sync ${s(sync.ms)} (${sync.products} products, ${mb(sync.bytes ?? 0)} on disk, ` +
          `cpu ${s(sync.cpuMs)}, RSS ${mb(sync.startRss)} -> peak ${mb(sync.maxRss)}), ` +
          `ratio ${ratio.toFixed(2)}x\n`,
      );
    }
    process.stdout.write(
      `ratio median ${median(ratios).toFixed(2)}x, worst ${Math.max(...ratios).toFixed(2)}x (goal <= 1.20x); ` +
        `sync peak RSS median ${mb(median(syncRss))}, worst ${mb(Math.max(...syncRss))} (goal <= 200 MB); ` +
        `floor peak RSS median ${mb(median(floorRss))}\n`,
    );
  } finally {
    child.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const childKind = process.env.BENCH_CATALOG_CHILD;
if (childKind) {
  await measure(
    childKind,
    process.env.BENCH_CATALOG_URL ?? "",
    process.env.BENCH_CATALOG_DIR ?? "",
  );
}
