import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exited, runCli, spawnCli } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "./helpers/redis.js";

/** One step of the README walk-through. */
type Step =
  | { kind: "file"; name: string; content: string }
  | { kind: "export"; vars: Record<string, string> }
  | { kind: "run"; args: string[]; background: boolean; exit: number; line: string };

/** Splits a shell line into words, honouring double and single quotes. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

function parseReadme(text: string): Step[] {
  const steps: Step[] = [];
  const blocks = text.matchAll(/(<!-- readme-test: file (\S+) -->\n)?```(\w+)\n([\s\S]*?)```/g);
  for (const [, , file, lang, body] of blocks) {
    if (file) steps.push({ kind: "file", name: file, content: body! });
    if (lang !== "console") continue;
    for (const raw of body!.split("\n")) {
      if (!raw.startsWith("$ ")) continue;
      const [command, comment = ""] = raw.slice(2).split(/\s+#\s*/);
      const exit = Number(/exit (\d+)/.exec(comment)?.[1] ?? 0);
      const background = command!.trim().endsWith("&");
      const tokens = words(command!.replace(/&\s*$/, ""));
      if (tokens[0] === "export") {
        steps.push({
          kind: "export",
          vars: Object.fromEntries(tokens.slice(1).map((t) => t.split("=", 2) as [string, string])),
        });
      } else if (tokens[0] === "giftjobs") {
        steps.push({ kind: "run", args: tokens.slice(1), background, exit, line: raw });
      }
    }
  }
  return steps;
}

describe("README walk-through", () => {
  const prefix = uniquePrefix("readme");
  const background: ReturnType<typeof spawnCli>[] = [];
  let dir: string;
  afterAll(async () => {
    for (const child of background) child.kill("SIGTERM");
    await Promise.all(background.map(exited));
    const redis = testRedis();
    await cleanPrefix(redis, prefix);
    await redis.quit();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("runs every command shown, with the exit code shown", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const steps = parseReadme(readme);
    expect(steps.filter((s) => s.kind === "run").length).toBeGreaterThan(15);
    dir = await mkdtemp(join(tmpdir(), "giftjobs-readme-"));
    const port = String(await freePort());
    const env: Record<string, string> = {
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    for (const step of steps) {
      if (step.kind === "file") await writeFile(join(dir, step.name), step.content);
      if (step.kind === "export") {
        for (const [k, v] of Object.entries(step.vars)) env[k] = v.replace("4010", port);
      }
      if (step.kind !== "run") continue;
      const args = step.args.map((a) => a.replace("4010", port));
      if (step.background) {
        const child = spawnCli(args, env, dir);
        background.push(child);
        await waitForStart(child);
        continue;
      }
      const result = await runCli(args, env, dir);
      expect({
        line: step.line,
        code: result.code,
        stderr: result.code === step.exit ? "" : result.stderr,
      }).toEqual({
        line: step.line,
        code: step.exit,
        stderr: "",
      });
      if (args.includes("--json") && step.exit === 0)
        expect(() => JSON.parse(result.stdout)).not.toThrow();
    }
    // About 30 CLI processes in a row (2 s each on an idle 2-core machine, twice that beside the
    // rest of the suite): a limit for a hang, not a measure of speed.
  }, 300_000);
});

/** A background command is ready when it printed something (sandbox) or ran for a moment (worker). */
async function waitForStart(child: ReturnType<typeof spawnCli>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !/listening|started/.test(child.output())) {
    if (child.exitCode !== null) throw new Error(`background command exited: ${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
