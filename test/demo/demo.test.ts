import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { runDemo } from "../../src/demo/run-demo.js";
import { silentLogger } from "../../src/log.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";

describe("giftjobs demo", () => {
  const prefix = uniquePrefix("demo");
  let dataDir: string;
  afterEach(async () => {
    const redis = testRedis();
    await cleanPrefix(redis, `${prefix}-demo`);
    await redis.quit();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs end to end, and a second run pays nothing again", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "giftjobs-demo-"));
    const config = loadConfig({
      env: { GIFTJOBS_REDIS_URL: REDIS_URL, GIFTJOBS_PREFIX: prefix, GIFTJOBS_DATA_DIR: dataDir },
    });
    const first = await runDemo({ config, log: silentLogger, rows: 60 });
    expect(first).toMatchObject({ rows: 60, new_rows: 60, already_known: 0, orders: 60 });
    expect(first.status).toMatchObject({
      total: 60,
      completed: 60,
      failed_final: 0,
      failed_uncertain: 0,
    });
    // What to try next: the demo's prefix set, so they show its campaign.
    expect(first.next).toEqual([
      `GIFTJOBS_PREFIX=${prefix}-demo npx giftjobs orders list`,
      `GIFTJOBS_PREFIX=${prefix}-demo npx giftjobs dashboard`,
    ]);
    const report = await readFile(first.report, "utf8");
    expect(report.trim().split("\n")).toHaveLength(61);
    expect(JSON.parse(await readFile(first.diff, "utf8"))).toBeTruthy();

    const second = await runDemo({ config, log: silentLogger, rows: 60 });
    expect(second).toMatchObject({ new_rows: 0, already_known: 60, orders: 0 });
    expect(second.status.completed).toBe(60);
  });
});
