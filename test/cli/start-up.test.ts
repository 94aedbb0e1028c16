import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeEach, describe, expect, it } from "vitest";
import { METAFILE } from "../../scripts/cli-bundle.mjs";
import { Ledger } from "../../src/ledger/ledger.js";
import { COMPILED_CLI, COMPILED_CLI_DIR } from "../helpers/cli-build.js";
import { REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = fileURLToPath(new URL("../helpers/cli-entry.ts", import.meta.url));
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;
const RECORDER = new URL("../helpers/module-recorder.mjs", import.meta.url).href;

/** Each test starts a CLI child or two, each some seconds on a busy machine. */
const CLI_TESTS_MS = 180_000;

/** The packages a command must not load: only the dashboard serves, only .xlsx needs exceljs. */
const NOT_FOR_CAMPAIGN_COMMANDS = ["exceljs", "express", "@bull-board/api", "bullmq", "pg"];

interface Loaded {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The npm packages the child loaded, by name, bundled into the chunks it loaded or not. */
  packages: string[];
  /** Every module it loaded (file URLs and paths), and each source of each chunk it loaded. */
  modules: string[];
  /** The ways into ICU it called (Intl's formatters, toLocaleString, localeCompare). */
  intl: string[];
}

/**
 * How the child runs the CLI: the bundle the run's globalSetup built (test/helpers/cli-build.ts)
 * as the shipped CLI is built, or, with GIFTJOBS_TEST_CLI=tsx, the sources under tsx. `preload`
 * goes before the recorder: what tsx loads is not the command's.
 */
function cli(): { preload: string[]; entry: string } {
  return existsSync(COMPILED_CLI)
    ? { preload: [], entry: COMPILED_CLI }
    : { preload: ["--import", TSX], entry: ENTRY };
}

/** A file's real path (node_modules/ may be a link); a path that names no file as it is. */
function real(path: string): string {
  return existsSync(path) ? realpathSync(path) : path;
}

/**
 * The sources of each chunk of the bundle, from the metafile esbuild wrote beside it: a chunk's
 * file loaded is each of its sources loaded (its npm packages' included).
 */
async function bundledSources(): Promise<Map<string, string[]>> {
  const sources = new Map<string, string[]>();
  if (!existsSync(COMPILED_CLI)) return sources;
  const meta = JSON.parse(await readFile(join(COMPILED_CLI_DIR, METAFILE), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  // By their real paths: Node runs a module from its real path, node_modules/ may be a link.
  for (const [output, { inputs }] of Object.entries(meta.outputs))
    sources.set(
      real(join(ROOT, output)),
      Object.keys(inputs).map((input) => real(join(ROOT, input))),
    );
  return sources;
}

/**
 * Runs `giftjobs ARGS` as test/helpers/cli.ts does, with module-recorder.mjs preloaded: what it
 * printed, and the modules it loaded. Not timed: what is loaded is what start-up costs
 * (docs/architecture/command-line.md, "Start-up").
 */
async function loadedBy(args: string[], env: Record<string, string>): Promise<Loaded> {
  const record = join(await tmpDir("modules"), "loaded.txt");
  const { preload, entry } = cli();
  const child = spawn(process.execPath, [...preload, "--import", RECORDER, entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, GIFTJOBS_DATABASE_URL: "", ...env, CI: "true", MODULE_RECORD: record },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  const lines = (await readFile(record, "utf8").catch(() => "")).split("\n").filter(Boolean);
  const intl = lines.filter((line) => line.startsWith("intl:")).map((line) => line.slice(5));
  const recorded = lines.filter((line) => !line.startsWith("intl:"));
  const chunks = await bundledSources();
  const modules = recorded.flatMap((module) => {
    const path = module.startsWith("file:") ? fileURLToPath(module) : module;
    return [module, ...(chunks.get(real(path)) ?? [])];
  });
  const packages = new Set<string>();
  for (const module of modules) {
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(decodeURI(module))?.[1];
    if (name && name !== ".cache") packages.add(name);
  }
  return { code, stdout, stderr, packages: [...packages].sort(), modules, intl };
}

describe("start-up loads what the command uses", () => {
  let env: Record<string, string>;
  beforeEach(async () => {
    const prefix = uniquePrefix("start-up");
    const redis = testRedis();
    try {
      await new Ledger(redis, prefix).campaigns.register("spring", { execution_mode: "async" });
    } finally {
      await redis.quit();
    }
    env = {
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: await tmpDir("start-up"),
    };
  });

  it(
    "`giftjobs --help` loads the definitions and commander, no implementation and no other package",
    async () => {
      const help = await loadedBy(["--help"], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("Usage: giftjobs");
      // The recorder saw the program start: a list that is empty would prove nothing.
      expect(help.modules.some((m) => m.endsWith("/src/cli/main.ts"))).toBe(true);
      expect(help.packages).toEqual(["commander"]);
      expect(help.modules.filter((m) => m.includes("/src/cli/commands/"))).toEqual([]);
      // A command's own --help too.
      const importHelp = await loadedBy(["orders", "import", "--help"], env);
      expect(importHelp.code).toBe(0);
      expect(importHelp.stdout).toContain("--campaign <name>");
      expect(importHelp.packages).toEqual(["commander"]);
    },
    CLI_TESTS_MS,
  );

  it(
    "`orders list` and `orders status` load no exceljs, express, bull-board, BullMQ or pg",
    async () => {
      const list = await loadedBy(["orders", "list", "--json"], env);
      expect([list.code, list.stderr]).toEqual([0, ""]);
      expect(JSON.parse(list.stdout)).toHaveLength(1);
      // They did load what they use: Redis's client.
      expect(list.packages).toContain("ioredis");
      expect(list.packages.filter((p) => NOT_FOR_CAMPAIGN_COMMANDS.includes(p))).toEqual([]);
      const status = await loadedBy(["orders", "status", "--campaign", "spring"], env);
      expect([status.code, status.stderr]).toEqual([0, ""]);
      expect(status.stdout).toMatch(/^campaign spring /);
      expect(status.packages.filter((p) => NOT_FOR_CAMPAIGN_COMMANDS.includes(p))).toEqual([]);
    },
    CLI_TESTS_MS,
  );

  it(
    "`orders list` and `orders status` call nothing of ICU (its first call loads its data: some 20 ms)",
    async () => {
      const list = await loadedBy(["orders", "list"], env);
      expect([list.code, list.stderr]).toEqual([0, ""]);
      expect(list.intl).toEqual([]);
      const status = await loadedBy(["orders", "status", "--campaign", "spring"], env);
      expect([status.code, status.stderr]).toEqual([0, ""]);
      expect(status.stdout).toMatch(/rows done|total/);
      expect(status.intl).toEqual([]);
      // The recorder does see a call: a daily limit in a zone of its own formats its day.
      const zoned = await loadedBy(["orders", "status", "--campaign", "spring"], {
        ...env,
        GIFTJOBS_LIMIT_TZ: "Europe/Paris",
      });
      expect(zoned.code).toBe(0);
      expect(zoned.intl).toContain("Intl.DateTimeFormat");
    },
    CLI_TESTS_MS,
  );

  it(
    "a package loaded lazily is seen: `orders template --out FILE.xlsx` loads exceljs, a CSV template does not",
    async () => {
      const out = join(env.GIFTJOBS_DATA_DIR!, "orders.xlsx");
      const xlsx = await loadedBy(["orders", "template", "--out", out], env);
      expect(xlsx.code).toBe(0);
      expect(xlsx.packages).toContain("exceljs");
      const csv = await loadedBy(["orders", "template"], env);
      expect(csv.code).toBe(0);
      expect(csv.stdout).toMatch(/^email,product_code,/);
      expect(csv.packages).not.toContain("exceljs");
    },
    CLI_TESTS_MS,
  );
});
