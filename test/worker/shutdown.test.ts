import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, campaignEnv, cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { exited, spawnCli } from "../helpers/cli.js";
import { eventually } from "../helpers/wait-for.js";

describe("worker shutdown", () => {
  let env: CampaignEnv;
  afterEach(async () => {
    await env?.dispose();
  });

  it("on SIGTERM finishes its active orders, leaves none in flight, and exits 0", async () => {
    env = await campaignEnv({ latencyMs: 300 }, "shutdown");
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 30 }));
    await importCampaign({ file, campaign: "s" }, depsOf(env));
    const worker = spawnCli(["worker", "--queues", "orders", "--concurrency", "5"], {
      ...cliEnvOf(env),
      GIFTJOBS_ORDER_RATE_LIMIT: "60000",
    });
    await eventually(
      async () => (await campaignStatus(env.ledger, "s")).in_flight > 0,
      "orders in flight",
    );
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
    const status = await campaignStatus(env.ledger, "s");
    expect(status.in_flight).toBe(0);
    expect(status.queued + status.submitted + status.completed).toBe(30);
    expect(status.queued).toBeGreaterThan(0);
    expect(worker.output()).toContain("worker stopped");
  }, 60_000);
});
