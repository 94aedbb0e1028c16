import { afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { runCli } from "../helpers/cli.js";
import { uniquePrefix } from "../helpers/redis.js";
import { startRedisServer } from "../helpers/redis-server.js";
import { tmpDir } from "../helpers/tmp-dir.js";

interface DoctorJson {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string }[];
}

const CHECKS = [
  "redis",
  "eviction",
  "persistence",
  "memory",
  "service",
  "catalog",
  "paid-memory",
  "daily-spend",
];

describe("giftjobs doctor", () => {
  let env: CampaignEnv | undefined;
  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  it("says in one line that a Redis has appendonly off, and exits 1", async () => {
    env = await campaignEnv({}, "doctor");
    // Its own Redis: the suite's may be any (GIFTJOBS_REDIS_URL), with appendonly on or off.
    const redis = await startRedisServer({ args: ["--appendonly", "no"] });
    const run = await giftjobs(env, ["doctor"], { GIFTJOBS_REDIS_URL: redis.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.map((l) => l.split(/\s+/)[1])).toEqual(CHECKS);
    expect(lines).toContain(
      `FAIL persistence  appendonly is off on ${redis.address}: a restart would forget the ledger; set appendonly yes (appendfsync everysec)`,
    );
    expect(lines).toContain(`ok   redis        Redis answers at ${redis.address}`);
    expect(run.stdout).toMatch(
      /^ok {3}service +the service at http:\/\/127\.0\.0\.1:\d+ takes the API key/m,
    );
    expect(run.stdout).toMatch(/^ok {3}catalog +snapshot \S+ \(120 products\) is \d+ min old$/m);
  });

  it("exits 0 when everything holds: a Redis with appendonly yes and noeviction, the service, a fresh snapshot (--json)", async () => {
    env = await campaignEnv({}, "doctor-ok");
    const redis = await startRedisServer({
      args: ["--appendonly", "yes", "--maxmemory-policy", "noeviction", "--maxmemory", "64mb"],
    });
    const run = await giftjobs(env, ["doctor", "--json"], { GIFTJOBS_REDIS_URL: redis.url });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as DoctorJson;
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => [c.name, c.ok])).toEqual(CHECKS.map((name) => [name, true]));
    expect(report.checks.find((c) => c.name === "memory")?.detail).toMatch(
      /MB of maxmemory 64\.0 MB used on 127\.0\.0\.1:\d+ \(\d+%\): room for about [\d,]+ more rows/,
    );
  });

  it("names GIFTJOBS_API_KEY when the service refuses the key, and the missing snapshot, without showing the key", async () => {
    const sandbox = await startSandbox({ products: 20, apiKey: "the-right-key-123" });
    try {
      const run = await runCli(["doctor"], {
        GIFTJOBS_API_URL: sandbox.url,
        GIFTJOBS_API_KEY: "a-wrong-key-456789",
        GIFTJOBS_DATA_DIR: await tmpDir("doctor-empty"),
        GIFTJOBS_PREFIX: uniquePrefix("doctor-key"),
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        /^FAIL service +the API key is not valid \(.*\): check GIFTJOBS_API_KEY$/m,
      );
      expect(run.stdout).toMatch(
        /^FAIL catalog +no catalog snapshot in .*\/catalog: run giftjobs catalog sync$/m,
      );
      expect(run.stdout + run.stderr).not.toContain("a-wrong-key-456789");
    } finally {
      await sandbox.close();
    }
  });

  it("says Redis does not answer, in one line, and exits 1", async () => {
    env = await campaignEnv({}, "doctor-down");
    const run = await giftjobs(env, ["doctor"], { GIFTJOBS_REDIS_URL: "redis://127.0.0.1:1" });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(
      /^FAIL redis +Redis does not answer at redis:\/\/127\.0\.0\.1:1 \(GIFTJOBS_REDIS_URL\): .*: start it, or fix GIFTJOBS_REDIS_URL \/ GIFTJOBS_REDIS_CLUSTER_NODES$/m,
    );
  });
});
