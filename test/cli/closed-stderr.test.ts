import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pauseIfRunning } from "../../src/campaigns/control.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { type CliRun, exited, spawnCli } from "../helpers/cli.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const REASON = "insufficient_funds: top up the USD balance";

/**
 * A line written above the progress bar (writeAboveOverlay: the pause and stall lines of
 * `orders status --wait`, the Redis outage lines) to a stderr whose reader went away is dropped:
 * the command goes on and exits with its own code (docs/architecture/audit.md, "Output that
 * cannot be written").
 */
describe("a line above the overlay, on a closed stderr", () => {
  let redis: Redis;
  let prefix: string;
  let dataDir: string;
  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    await cleanPrefix(redis, prefix);
  });

  it("orders status --wait on a paused campaign: its PAUSED line dropped, the wait runs to its timeout", async () => {
    prefix = uniquePrefix("closed-stderr");
    dataDir = await tmpDir("closed-stderr");
    const ledger = new Ledger(redis, prefix);
    await ledger.campaigns.register("held-up", { state: "running", execution_mode: "sync" });
    await ledger.orders.record("held-up", oneRowOrders("held-up", ["a", "b"]));
    expect(await pauseIfRunning(ledger, "held-up", REASON)).toBe(true);
    const env = {
      GIFTJOBS_API_URL: "http://127.0.0.1:9",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    const args = ["orders", "status", "--campaign", "held-up", "--wait", "--timeout", "1"];
    const run = async (closeStderr: boolean): Promise<CliRun> => {
      const child = spawnCli(args, env);
      if (closeStderr) child.stderr!.destroy();
      const code = await exited(child);
      return { code, ...child.printed() };
    };
    // With stderr open: the PAUSED line, then the wait's timeout (exit 124).
    const open = await run(false);
    expect(open.stderr).toContain("giftjobs: campaign held-up is PAUSED");
    expect(open.stderr).toContain("giftjobs: timed out after 1 s waiting for campaign held-up");
    expect(open.code).toBe(124);
    // Closed: the lines are lost, the wait and its exit code are the same (not a crash, exit 1).
    const closed = await run(true);
    expect(closed.code).toBe(124);
    expect(closed.stdout).toBe(open.stdout);
  }, 60_000);
});
