import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { orderJobSlots } from "../../src/worker/orders-queue.js";
import { depsOf } from "../helpers/campaign-env.js";
import { control, stats } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

describe("sending slots", () => {
  const envs = useCampaignEnv({ asyncCompleteMs: 50 });

  it("a worker holds a fifth more jobs than its concurrency, at least one", () => {
    expect(orderJobSlots(1)).toBe(2);
    expect(orderJobSlots(5)).toBe(6);
    expect(orderJobSlots(10)).toBe(12);
    expect(orderJobSlots(50)).toBe(60);
  });

  it("the service sees at most --concurrency orders in flight, and that many while rows wait", async () => {
    const env = await envs.setup("slots");
    await control(env.sandbox, "/_sandbox/faults", { latency_ms: 150 });
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 30 }));
    await importCampaign({ file, campaign: "slots" }, depsOf(env));
    await envs.work(env, { concurrency: 4 });
    await eventually(
      async () => (await campaignStatus(env.ledger, "slots")).completed === 30,
      "30 completed rows",
    );
    const seen = await stats(env.sandbox);
    // The worker holds 5 jobs; the fifth waits for a slot, so the service never sees 5 at once.
    expect(seen.most_in_flight["POST /v2/order"]).toBe(4);
    expect(seen.requests["POST /v2/order"]).toEqual({ "202": 30 });
  });
});
