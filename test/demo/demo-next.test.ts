import { afterEach, describe, expect, it } from "vitest";
import { exited, runCli, spawnCli } from "../helpers/cli.js";
import { freePort } from "../helpers/free-port.js";
import { REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";
import { waitFor } from "../helpers/wait-for.js";

/** Milliseconds since the call, when the function returned is called. */
function timer(): () => number {
  const start = performance.now();
  return () => performance.now() - start;
}

/**
 * "done in N s" is the time the user waited: no more than the child ran, and short of it only
 * by the process's own start and exit.
 */
function expectTimeWaited(stdout: string, waitedMs: number): void {
  const said = /done in (\d+\.\d) s/.exec(stdout)?.[1];
  expect(said, stdout).toBeDefined();
  const saidMs = Number(said) * 1000;
  expect(saidMs).toBeLessThanOrEqual(waitedMs + 50);
  expect(saidMs).toBeGreaterThan(waitedMs - 1200);
}

/** What `giftjobs demo` ends with is true: the commands it prints show its campaign. */
describe("after the demo", () => {
  let dataDir: string | undefined;
  afterEach(async () => {
    if (dataDir) await removeDir(dataDir);
    dataDir = undefined;
  });

  it("ends with the next two commands, and they show its campaign (orders list, the dashboard)", async () => {
    dataDir = await tmpDir("demo-next");
    // The prefix's keys, and those of PREFIX-demo, are deleted after the test.
    const env = {
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: uniquePrefix("demo-next"),
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    // Before the demo, no campaign anywhere: orders list says so and nothing more.
    expect((await runCli(["orders", "list"], env)).stdout).toBe("no campaigns\n");
    const waited = timer();
    const demo = await runCli(["demo", "--rows", "12"], env);
    expect(demo.code, demo.stderr).toBe(0);
    expectTimeWaited(demo.stdout, waited());
    const lines = demo.stdout.trimEnd().split("\n");
    const at = lines.findIndex((line) => line.startsWith("next, try"));
    expect(at).toBe(lines.length - 3);
    const prefix = `${env.GIFTJOBS_PREFIX}-demo`;
    const commands = lines.slice(at + 1).map((line) => line.trim().split(/\s{2,}/)[0]!);
    expect(commands).toEqual([
      `GIFTJOBS_PREFIX=${prefix} npx giftjobs orders list`,
      `GIFTJOBS_PREFIX=${prefix} npx giftjobs dashboard`,
    ]);

    // Each as printed: its environment assignment, then npx giftjobs and its arguments.
    const asRun = (command: string) => {
      const [assignment, npx, program, ...args] = command.split(" ");
      const [name, value] = assignment!.split("=") as [string, string];
      expect([npx, program]).toEqual(["npx", "giftjobs"]);
      return { env: { ...env, [name]: value }, args };
    };
    const list = asRun(commands[0]!);
    const listed = await runCli(list.args, list.env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^demo\s+done\s+12\s/m);
    const json = await runCli([...list.args, "--json"], list.env);
    expect(JSON.parse(json.stdout)).toMatchObject([{ campaign: "demo", total: 12, completed: 12 }]);
    // orders list without the demo's prefix: none of its own, and where the demo's campaign is.
    const plain = await runCli(["orders", "list"], env);
    expect(plain.stdout).toBe(
      `no campaigns\nthe demo's campaign is under a Redis prefix of its own: ${commands[0]}\n`,
    );
    expect(JSON.parse((await runCli(["orders", "list", "--json"], env)).stdout)).toEqual([]);

    // The dashboard, on a free port instead of 3000 (the one thing changed).
    const board = asRun(commands[1]!);
    const dashboard = spawnCli([...board.args, "--port", "0"], board.env);
    try {
      const url = await waitFor(
        async () => /dashboard on (\S+)/.exec(dashboard.output())?.[1],
        30_000,
        "the dashboard's address",
      );
      const response = await fetch(new URL("campaigns.json", url));
      expect(response.status).toBe(200);
      const { campaigns } = (await response.json()) as {
        campaigns: { campaign: string; total: number }[];
      };
      expect(campaigns.map((c) => [c.campaign, c.total])).toEqual([["demo", 12]]);
    } finally {
      dashboard.kill("SIGTERM");
      await exited(dashboard);
    }
  }, 180_000);

  it("on a private Redis, stopped at its end, says no command shows its campaign and names the first steps of a real run", async () => {
    dataDir = await tmpDir("demo-private");
    // Nothing listens at the configured Redis: the demo starts a redis-server of its own.
    const env = {
      GIFTJOBS_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      GIFTJOBS_PREFIX: uniquePrefix("demo-private"),
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    const waited = timer();
    const demo = await runCli(["demo", "--rows", "3"], env);
    expect(demo.code, demo.stderr).toBe(0);
    // The private redis-server's start and stop are part of the wait.
    expectTimeWaited(demo.stdout, waited());
    const lines = demo.stdout.trimEnd().split("\n");
    expect(lines.slice(-4).map((line) => line.trim().split(/\s{2,}/)[0])).toEqual([
      "the demo ran on a private Redis, stopped now: no command shows its campaign (with Redis 7 at GIFTJOBS_REDIS_URL, orders list would)",
      "next, try:",
      "npx giftjobs doctor",
      "npx giftjobs catalog sync",
    ]);
    // doctor, as printed, says what a real run lacks here: Redis first.
    const doctor = await runCli(["doctor"], env);
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout + doctor.stderr).toContain("Redis does not answer");
  }, 180_000);
});
