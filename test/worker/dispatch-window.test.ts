import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { dispatchWindow, WINDOW_SLOTS_FACTOR } from "../../src/worker/dispatcher.js";
import { orderJobSlots } from "../../src/worker/orders-queue.js";
import { depsOf } from "../helpers/campaign-env.js";
import { control } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

describe("dispatch window", () => {
  const envs = useCampaignEnv({ asyncCompleteMs: 50 });

  it("is a second of the rate limit, at least 4, at most ten times the job slots", () => {
    expect(dispatchWindow(300)).toBe(5);
    expect(dispatchWindow(60)).toBe(4);
    expect(dispatchWindow(3000, orderJobSlots(50))).toBe(50);
    expect(dispatchWindow(10_000_000, orderJobSlots(50))).toBe(WINDOW_SLOTS_FACTOR * 60);
    expect(dispatchWindow(10_000_000, 1)).toBe(10);
  });

  it("with a rate limit the workers cannot reach, BullMQ holds no more than the window", async () => {
    // The env's limit is 60,000/min: a second of it is 1,000 jobs, every row of this campaign.
    const env = await envs.setup("window");
    await control(env.sandbox, "/_sandbox/faults", { latency_ms: 30 });
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 120 }));
    await importCampaign({ file, campaign: "window" }, depsOf(env));
    let window = 0;
    await envs.work(env, {
      concurrency: 2,
      hooks: { onDispatchWindow: (size) => (window = size) },
    });
    let most = 0;
    // Sampled at each look of `eventually`, until every row is completed.
    await eventually(async () => {
      const jobs = await env.queue.getJobCounts("wait", "delayed", "active", "prioritized");
      const held = Object.values(jobs).reduce((sum, n) => sum + (n ?? 0), 0);
      most = Math.max(most, held);
      return (await campaignStatus(env.ledger, "window")).completed === 120;
    }, "120 completed rows");
    expect(window).toBe(WINDOW_SLOTS_FACTOR * orderJobSlots(2));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(window);
  });
});
