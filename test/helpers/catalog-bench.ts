// What both halves of `npm run bench -- catalog` share (docs/benchmarks.md): test/bench/catalog.ts
// (the file store) and test/bench/catalog-pg.ts (PostgreSQL) sync from the same sandbox, in a
// child process of its own, and their floors walk its product pages the same way.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { httpTransport } from "../../src/api/transport.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The sandbox's products: BENCH_CATALOG_PRODUCTS, 100,000 by default. */
export const CATALOG_PRODUCTS = Number(process.env.BENCH_CATALOG_PRODUCTS ?? 100_000);

/**
 * Rounds of each half: BENCH_ROUNDS, 5 by default (on two cores one round's ratio moves by 0.3x
 * with whatever else runs; the median of five is what the goal is judged by).
 */
export const CATALOG_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** The PostgreSQL half's rounds: BENCH_PG_ROUNDS, else CATALOG_ROUNDS. */
export const PG_ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? CATALOG_ROUNDS);

/** A sandbox serving in a child process until `stop()`. */
export interface SandboxChild {
  url: string;
  stop(): void;
}

/**
 * A sandbox of CATALOG_PRODUCTS products (seed 42) in a child process, so that the server does
 * not share an event loop with the client being measured.
 */
export async function startSandboxChild(): Promise<SandboxChild> {
  const script = `import("./src/sandbox/index.ts").then(async (m) => {
  const sandbox = await m.startSandbox({ products: ${CATALOG_PRODUCTS}, seed: 42, port: 0 });
  process.stdout.write(sandbox.url + "\\n");
})`;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "-e", script], {
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
  return { url, stop: () => child.kill() };
}

/** What a floor reads of a product page: whether it is empty, and the cursor of the next. */
export interface PageRead {
  empty: boolean;
  after?: string;
}

/**
 * The floors' walk: GET /v2/product 500 at a time, page after page, over the client's own
 * transport (node:http keep-alive, cheaper than fetch), each page's bytes given to `read`, until
 * an empty page. Answers how many pages were not empty.
 */
export async function walkPages(
  url: string,
  read: (bytes: Buffer) => PageRead | Promise<PageRead>,
): Promise<number> {
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
    const page = await read(response.bytes);
    if (page.empty) return pages;
    pages += 1;
    after = page.after;
  }
}

/** A product page parsed whole, as a hand-written script reads it. */
export function parsePage(bytes: Buffer): {
  catalog: unknown[];
  pagination: { cursors: { after?: string } };
} {
  return JSON.parse(bytes.toString("utf8"));
}

/** Bytes as whole megabytes, for the figures. */
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** Milliseconds as seconds, for the figures. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
