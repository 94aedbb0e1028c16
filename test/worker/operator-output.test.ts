import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus, pendingRows } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, campaignEnv, cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { exited, runCli, spawnCli } from "../helpers/cli.js";
import { eventually } from "../helpers/wait-for.js";

/** What an operator sees: a worker's terminal, and `orders status --wait` giving up. */
describe("operator output", () => {
  let env: CampaignEnv | undefined;
  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  it("a 500-order run logs a few dozen lines at info, not one per order; --wait times out in one line", async () => {
    env = await campaignEnv(
      { orderRateLimit: 100_000, asyncCompleteMs: 200, failRate: 0.05 },
      "tty",
    );
    const e = env;
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 500, products: 3 }));
    await importCampaign({ file, campaign: "big" }, depsOf(e));
    const childEnv = {
      ...cliEnvOf(e),
      GIFTJOBS_ORDER_RATE_LIMIT: "60000",
      GIFTJOBS_LOG_LEVEL: "info",
    };

    // No worker yet: the wait gives up, in one line saying why, with exit 124.
    const waited = await runCli(
      ["orders", "status", "--campaign", "big", "--wait", "--timeout", "1"],
      childEnv,
    );
    expect(waited.code).toBe(124);
    expect(waited.stdout).toBe("");
    expect(waited.stderr.trim()).toBe(
      "giftjobs: timed out after 1 s waiting for campaign big: 0 of 500 rows done; it is STALLED (no_worker): no worker is running: start one with `giftjobs worker`",
    );

    const worker = spawnCli(["worker", "--queues", "orders", "--concurrency", "20"], childEnv);
    try {
      await eventually(
        async () => pendingRows(await campaignStatus(e.ledger, "big")) === 0,
        "every row at an end",
        120_000,
      );
      await eventually(async () => worker.output().includes("campaign big: done"), "done line");
    } finally {
      worker.kill("SIGTERM");
      await exited(worker);
    }
    const lines = worker.output().trim().split("\n");
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(lines.length, messages.join("\n")).toBeLessThanOrEqual(40);
    expect(messages.filter((m) => m.startsWith("campaign big: started sending"))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith("campaign big: done"))).toHaveLength(1);
    // Retried 5xx are not warnings, one per order.
    const levels = lines.map((line) => (JSON.parse(line) as { level: number }).level);
    expect(levels.filter((level) => level >= 40)).toEqual([]);
    const status = await campaignStatus(e.ledger, "big");
    expect(status.completed).toBe(500);
  }, 180_000);
});
