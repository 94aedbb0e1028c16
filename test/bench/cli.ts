// Benchmark of the CLI's start-up (docs/architecture/command-line.md, "Start-up"): the wall
// time of `giftjobs --help`, `orders list` on an empty prefix and `orders status` of a campaign,
// each as a user runs it (bin/giftjobs.js, the bundle in dist/cli/), against `node -e 0` run in
// the same round just before it: a busy machine slows both. The median of BENCH_RUNS rounds
// (default 15) of each, their ratio and its goal; and each command's peak RSS, from runs of their
// own (RSS_RUNS, with a preload that reads it: a preload costs start-up time, so the timed runs
// have none).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ledger } from "../../src/ledger/ledger.js";
import { printFigure, printNotes } from "../helpers/bench-figures.js";
import { loadAverage, spread } from "../helpers/bench-stats.js";
import { median } from "../helpers/median.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin", "giftjobs.js");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const RSS_RUNS = 3;
const CAMPAIGN = "bench";

/** Each command with its goal: at most this many times `node -e 0`'s wall time. */
const COMMANDS: { args: string[]; goal: number }[] = [
  { args: ["--help"], goal: 2.5 },
  { args: ["orders", "list"], goal: 4 },
  { args: ["orders", "status", "--campaign", CAMPAIGN], goal: 4 },
];

/**
 * Preloaded into the children whose RSS is read, `node -e 0` too: writes the process's peak RSS
 * (KiB) on fd 3 as it exits. A data: URL, so the child loads no file for it.
 */
const RSS_PRELOAD = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs";' +
    "process.on('exit', () => { try { writeSync(3, String(process.resourceUsage().maxRSS)); } catch {} });",
)}`;

interface Run {
  ms: number;
  /** Peak RSS, bytes; 0 when not read. */
  maxRss: number;
}

/** One child to its end: its wall time from spawn to exit; with `rss`, its peak RSS. */
function timed(args: string[], env: Record<string, string>, rss = false): Promise<Run> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const preload = rss ? ["--import", RSS_PRELOAD] : [];
    const child = spawn(process.execPath, [...preload, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let peak = "";
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.stdio[3]?.on("data", (d) => {
      peak += d;
    });
    child.on("error", reject);
    let ms = 0;
    child.on("exit", () => {
      ms = Number(process.hrtime.bigint() - start) / 1e6;
    });
    // Once its pipes are read to their end too: fd 3 holds the peak RSS.
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${stderr.trim()}`));
      else resolve({ ms, maxRss: Number(peak) * 1024 });
    });
  });
}

/** The newest modification time of the files under `dir` (ms). */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(ts|sql|lua)$/.test(entry.name)) continue;
    latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

const ms = (n: number) => `${n.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const verdict = (met: boolean) => (met ? "MET" : "MISSED");

export async function run(): Promise<void> {
  // bin/giftjobs.js runs dist/cli/: measuring an old build would measure old code.
  if (
    !existsSync(MAIN) ||
    statSync(MAIN).mtimeMs < Math.max(newest(join(ROOT, "src")), newest(join(ROOT, "jobs")))
  ) {
    process.stderr.write(
      "bench: dist/cli/ is missing or older than src/: run `npm run build` first\n",
    );
    process.exitCode = 2;
    return;
  }
  const redis = testRedis();
  const prefix = uniquePrefix("bench-cli");
  try {
    // A held campaign of no rows for `orders status`; `orders list` reads a prefix of its own,
    // empty.
    await new Ledger(redis, prefix).campaigns.register(CAMPAIGN, { execution_mode: "async" });
    const envFor = (args: string[]) => ({
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: args[1] === "list" ? `${prefix}-empty` : prefix,
      GIFTJOBS_DATABASE_URL: "",
      CI: "true",
    });
    const before = `${loadAverage()} before`;
    process.stdout.write(`${RUNS} rounds of each; ${before}; bin/giftjobs.js (dist/cli/)\n`);
    const header = [
      "command",
      "node -e 0",
      "command",
      "ratio",
      "goal",
      "",
      "rounds' ratios",
      "peak RSS",
    ];
    const rows: string[][] = [];
    for (const { args, goal } of COMMANDS) {
      const floor: Run[] = [];
      const command: Run[] = [];
      // One warm-up round each, not counted (the file system cache).
      await timed(["-e", "0"], {});
      await timed([BIN, ...args], envFor(args));
      for (let i = 0; i < RUNS; i += 1) {
        floor.push(await timed(["-e", "0"], {}));
        command.push(await timed([BIN, ...args], envFor(args)));
      }
      const floorRss: Run[] = [];
      const commandRss: Run[] = [];
      for (let i = 0; i < RSS_RUNS; i += 1) {
        floorRss.push(await timed(["-e", "0"], {}, true));
        commandRss.push(await timed([BIN, ...args], envFor(args), true));
      }
      const floorMs = median(floor.map((r) => r.ms));
      const commandMs = median(command.map((r) => r.ms));
      const ratio = commandMs / floorMs;
      rows.push([
        `giftjobs ${args.join(" ")}`,
        ms(floorMs),
        ms(commandMs),
        `${ratio.toFixed(2)}x`,
        `<= ${goal}x`,
        verdict(ratio <= goal),
        spread(command.map((run, i) => run.ms / floor[i]!.ms)),
        `${mb(median(commandRss.map((r) => r.maxRss)))} (node -e 0: ${mb(median(floorRss.map((r) => r.maxRss)))})`,
      ]);
    }
    printFigure(`Start-up, the median of ${RUNS} rounds`, [header, ...rows]);
    printNotes([`${before}, ${loadAverage()} after`]);
  } finally {
    await cleanPrefix(redis, prefix);
    await cleanPrefix(redis, `${prefix}-empty`);
    await redis.quit();
  }
}
