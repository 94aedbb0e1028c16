// Benchmarks measure each side in a fresh child process of its own, so that neither inherits the
// other's heap, JIT state or connections, and each peak RSS is that child's own. The children run
// the bench file compiled to one JavaScript module (esbuild, npm packages left external), as the
// CLI runs compiled JS; BENCH_RUNTIME=tsx runs them under tsx instead (about 40 MB more RSS each).
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export const CHILD_RUNTIME = process.env.BENCH_RUNTIME === "tsx" ? "tsx" : "compiled";

/** Node options for the children only, e.g. BENCH_CHILD_NODE_ARGS="--cpu-prof" to profile one side. */
const CHILD_NODE_ARGS = (process.env.BENCH_CHILD_NODE_ARGS ?? "").split(" ").filter(Boolean);

/** What every measuring child reports besides its own figures. */
export interface ChildMeasure {
  ms: number;
  /** RSS once the modules are loaded, before any work. */
  startRss: number;
  /** process.resourceUsage().maxRSS at the end, in bytes. */
  maxRss: number;
  /** User + system CPU of the measured part. */
  cpuMs: number;
  /** Time the main thread spent in garbage collection during the measured part. */
  gcMs: number;
}

/**
 * The script a child runs: `file` compiled next to node_modules (so npm packages still
 * resolve), or `file` itself under tsx.
 */
export async function childScript(file: string): Promise<string> {
  if (CHILD_RUNTIME === "tsx") return file;
  const dir = join(ROOT, "node_modules", ".cache", "giftjobs-bench");
  await mkdir(dir, { recursive: true });
  const name = basename(file).replace(/\.ts$/, "-child");
  const esbuild = await import("esbuild");
  // The workers the code starts are bundled beside it, as the CLI's are (scripts/cli-bundle.mjs).
  const { WORKER_ENTRIES } = await import("../../scripts/cli-bundle.mjs");
  await esbuild.build({
    entryPoints: { [name]: file, ...WORKER_ENTRIES },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return join(dir, `${name}.mjs`);
}

function spawnChild(script: string, env: Record<string, string>) {
  const args = [
    // The script sits in node_modules/.cache: where node_modules is a link to another checkout's
    // (a git worktree's), Node would run it from there, and the child would read that checkout's
    // files by its package root (the ledger's Lua scripts), not this one's.
    "--preserve-symlinks-main",
    ...CHILD_NODE_ARGS,
    ...(CHILD_RUNTIME === "tsx" ? ["--import", "tsx"] : []),
    script,
  ];
  return spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
}

/** A child that serves until stopped (see startChild). */
export interface ServingChild {
  /** SIGTERM, then its report (its last stdout line, as JSON) once it has exited. */
  stop<T>(): Promise<T>;
}

/**
 * Starts `script` with `env` and resolves once it prints `ready` on a line of its own: for a
 * side that serves (a receiver) rather than runs to an end. The child ends on SIGTERM.
 */
export function startChild(script: string, env: Record<string, string>): Promise<ServingChild> {
  const child = spawnChild(script, env);
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      const before = out;
      out += chunk;
      if (!/^ready$/m.test(before) && /^ready$/m.test(out))
        resolve({
          stop: async <T>() => {
            child.kill("SIGTERM");
            const code = await exited;
            const last = out.trim().split("\n").pop();
            if (code !== 0 || !last)
              throw new Error(`bench child ${script} exited with ${code}: ${out}`);
            return JSON.parse(last) as T;
          },
        });
    });
    void exited.then((code) =>
      reject(new Error(`bench child ${script} exited with ${code}: ${out}`)),
    );
  });
}

/** Runs `script` with `env` to its end; its last stdout line is its report, as JSON. */
export async function runChild<T>(script: string, env: Record<string, string>): Promise<T> {
  const child = spawnChild(script, env);
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const last = out.trim().split("\n").pop();
  if (code !== 0 || !last) throw new Error(`bench child ${script} exited with ${code}: ${out}`);
  return JSON.parse(last) as T;
}

/** Child side: runs `work`, then prints its report with time, CPU and RSS as the last line. */
export async function measureInChild<T extends object>(work: () => Promise<T>): Promise<void> {
  const startRss = process.memoryUsage().rss;
  let gcMs = 0;
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  collections.observe({ entryTypes: ["gc"] });
  const cpu = process.cpuUsage();
  const started = performance.now();
  const report = await work();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  // The entries of the last collections are delivered on a later turn.
  await new Promise((resolve) => setImmediate(resolve));
  collections.disconnect();
  const measure: ChildMeasure = {
    ms,
    startRss,
    maxRss: process.resourceUsage().maxRSS * 1024,
    cpuMs: (used.user + used.system) / 1000,
    gcMs,
  };
  // A report field named like a measure would be overwritten without a word (orders (a) once
  // reported its whole run as its send time that way).
  const clash = Object.keys(measure).filter((key) => key in report);
  if (clash.length > 0) throw new Error(`bench child report overwrites ${clash.join(", ")}`);
  process.stdout.write(`${JSON.stringify({ ...report, ...measure })}\n`);
}
