import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { QUEUES } from "../jobs/registry.js";
import { type CliRun, cliCommandLine, exited } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "./helpers/redis.js";
import { eventually } from "./helpers/wait-for.js";

/** One step of the README walk-through. */
type Step =
  | { kind: "file"; name: string; content: string }
  | { kind: "export"; vars: Record<string, string> }
  | { kind: "run"; command: string; background: boolean; exit: number; line: string };

/** Splits a shell line into words, honouring double and single quotes. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** `NAME=value` or `NAME="value"`: the name and the value, unquoted. */
function assignment(token: string): [string, string] {
  const at = token.indexOf("=");
  return [token.slice(0, at), token.slice(at + 1).replace(/^"(.*)"$/, "$1")];
}

/**
 * The walk-through's steps. A `$` line is an `export` or a giftjobs command: `npx giftjobs`, or
 * plain `giftjobs` once an export has put the checkout's `node_modules/.bin` on the PATH (npm ci
 * links giftjobs there: scripts/prepare.mjs). A bare `giftjobs` line before that, or any other
 * command, is a mistake of the README.
 */
function parseReadme(text: string): Step[] {
  const steps: Step[] = [];
  let onPath = false;
  const blocks = text.matchAll(/(<!-- readme-test: file (\S+) -->\n)?```(\w+)\n([\s\S]*?)```/g);
  for (const [, , file, lang, body] of blocks) {
    if (file) steps.push({ kind: "file", name: file, content: body! });
    if (lang !== "console") continue;
    for (const raw of body!.split("\n")) {
      if (!raw.startsWith("$ ")) continue;
      const command = raw.slice(2);
      const comment = /\s#\s*(.*)$/.exec(command)?.[1] ?? "";
      const exit = Number(/exit (\d+)/.exec(comment)?.[1] ?? 0);
      const tokens = words(command);
      if (tokens[0] === "export") {
        const vars = Object.fromEntries(tokens.slice(1).map(assignment));
        onPath ||= vars.PATH?.startsWith("$PWD/node_modules/.bin:") ?? false;
        steps.push({ kind: "export", vars });
      } else if (
        (tokens[0] === "npx" && tokens[1] === "giftjobs") ||
        (onPath && tokens[0] === "giftjobs")
      ) {
        const background = /&\s*$/.test(command);
        steps.push({ kind: "run", command, background, exit, line: raw });
      } else {
        throw new Error(
          `README: "${raw}" is not an npx giftjobs line, a giftjobs line once node_modules/.bin is on the PATH, or an export`,
        );
      }
    }
  }
  return steps;
}

/**
 * The commands the lines' shell finds: `npx giftjobs ARGS` in the checkout runs the checkout's
 * own giftjobs, and so does `node_modules/.bin/giftjobs` once on the PATH; here both run the one
 * the test run compiled from these sources (as spawnCli). The lines run in `dir`, the checkout's
 * stand-in, so `$PWD/node_modules/.bin` is `dir`'s. Returns the folder holding npx.
 */
async function commandStandIns(dir: string): Promise<string> {
  const program = cliCommandLine()
    .map((word) => `'${word}'`)
    .join(" ");
  const npx = [
    "#!/bin/sh",
    'if [ "$1" != giftjobs ]; then echo "npx: only giftjobs here, not $1" >&2; exit 127; fi',
    "shift",
    `exec ${program} "$@"`,
    "",
  ];
  const giftjobs = ["#!/bin/sh", `exec ${program} "$@"`, ""];
  await writeScript(join(dir, ".bin", "npx"), npx);
  await writeScript(join(dir, "node_modules", ".bin", "giftjobs"), giftjobs);
  return join(dir, ".bin");
}

async function writeScript(path: string, lines: string[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, lines.join("\n"));
  await chmod(path, 0o755);
}

/** An export's value as the shell gives it: `$PWD` and `$NAME` replaced. */
function expanded(value: string, env: NodeJS.ProcessEnv, cwd: string): string {
  return value.replace(/\$(\w+)/g, (_, name: string) => (name === "PWD" ? cwd : (env[name] ?? "")));
}

type LineChild = ChildProcess & { output: () => string };

/** Runs one line in a shell, as typed; a background line (`&`) in a process group of its own. */
function spawnLine(command: string, env: NodeJS.ProcessEnv, cwd: string, background: boolean) {
  const text = background ? command.replace(/&\s*$/, "") : command;
  const child = spawn("/bin/sh", ["-c", text], {
    cwd,
    env,
    detached: background,
    stdio: ["ignore", "pipe", "pipe"],
  }) as LineChild;
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  child.output = () => stdout + stderr;
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

/** A shell line without its comment and the spaces around it. */
const withoutComment = (line: string) => line.replace(/\s+#.*$/, "").trim();

describe("README's first screen", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)];

  it("gives the two commands first: the demo, then the tests", () => {
    const [lang, body] = [blocks[0]![1], blocks[0]![2]!];
    expect(lang).toBe("sh");
    expect(body.trimEnd().split("\n").map(withoutComment)).toEqual([
      "npm ci && npx giftjobs demo",
      "npm test",
    ]);
  });

  it("then an example of ten lines at most, each run by the walk-through, then the concepts", () => {
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 2)).toEqual(["An example", "Concepts"]);
    const example = blocks[1]![2]!.trimEnd().split("\n");
    expect(example.length).toBeLessThanOrEqual(10);
    const walkThrough = new Set(
      blocks
        .filter(([, lang]) => lang === "console")
        .flatMap(([, , body]) => body!.split("\n"))
        .filter((line) => line.startsWith("$ "))
        .map((line) => withoutComment(line.slice(2))),
    );
    for (const line of example) expect(walkThrough, line).toContain(withoutComment(line));
  });
});

describe("README walk-through", () => {
  const prefix = uniquePrefix("readme");
  const background: LineChild[] = [];
  let dir: string;
  afterAll(async () => {
    for (const child of background)
      if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
    await Promise.all(background.map(exited));
    const redis = testRedis();
    await cleanPrefix(redis, prefix);
    await redis.quit();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses a bare giftjobs line until node_modules/.bin is on the PATH", () => {
    const line = "```console\n$ giftjobs orders list\n```\n";
    expect(() => parseReadme(line)).toThrow('"$ giftjobs orders list" is not an npx giftjobs line');
    const onPath =
      '```console\n$ export PATH="$PWD/node_modules/.bin:$PATH"\n$ giftjobs orders list\n```\n';
    expect(parseReadme(onPath).map((s) => s.kind)).toEqual(["export", "run"]);
  });

  it("has npm ci link node_modules/.bin/giftjobs to the checkout's bin/giftjobs.js", () => {
    const link = fileURLToPath(new URL("../node_modules/.bin/giftjobs", import.meta.url));
    expect(realpathSync(link)).toBe(
      realpathSync(fileURLToPath(new URL("../bin/giftjobs.js", import.meta.url))),
    );
  });

  it("runs every command shown, as written in a shell, with the exit code shown", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const steps = parseReadme(readme);
    expect(steps.filter((s) => s.kind === "run").length).toBeGreaterThan(15);
    dir = await mkdtemp(join(tmpdir(), "giftjobs-readme-"));
    const port = String(await freePort());
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${await commandStandIns(dir)}:${process.env.PATH}`,
      CI: "true",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    for (const step of steps) {
      if (step.kind === "file") await writeFile(join(dir, step.name), step.content);
      if (step.kind === "export") {
        for (const [k, v] of Object.entries(step.vars))
          env[k] = expanded(v, env, dir).replace("4010", port);
      }
      if (step.kind !== "run") continue;
      const command = step.command.replace("4010", port);
      const { child, done } = spawnLine(command, env, dir, step.background);
      if (step.background) {
        background.push(child);
        await waitForStart(child, prefix);
        continue;
      }
      const result = await done;
      expect({
        line: step.line,
        code: result.code,
        stderr: result.code === step.exit ? "" : result.stderr,
      }).toEqual({
        line: step.line,
        code: step.exit,
        stderr: "",
      });
      if (command.includes("--json") && step.exit === 0)
        expect(() => JSON.parse(result.stdout)).not.toThrow();
    }
    // About 30 CLI processes in a row (2 s each on an idle 2-core machine, twice that beside the
    // rest of the suite): a limit for a hang, not a measure of speed.
  }, 300_000);
});

/**
 * A background command is ready when the sandbox says it listens, or when the worker's orders
 * queue under `prefix` has a worker (it logs nothing at the walk-through's warn level).
 */
async function waitForStart(child: LineChild, prefix: string): Promise<void> {
  const redis = testRedis();
  const orders = new Queue(QUEUES.orders, { connection: redis, prefix });
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`background command exited: ${child.output()}`);
        return /listening/.test(child.output()) || (await orders.getWorkersCount()) > 0;
      },
      "the background command to start",
      15_000,
    );
  } finally {
    await orders.close();
    await redis.quit();
  }
}
