import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, depsOf } from "../helpers/campaign-env.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

describe("a campaign end to end", () => {
  const envs = useCampaignEnv();
  let env: CampaignEnv;

  it("imports, pays each row exactly once, and a re-import adds nothing", async () => {
    env = await envs.setup("flow", { asyncCompleteMs: 100 });
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 40 }));
    const deps = depsOf(env);

    const first = await importCampaign({ file, campaign: "spring" }, deps);
    expect(first).toMatchObject({
      rows: 40,
      valid: 40,
      invalid: 0,
      enqueued: 40,
      already_known: 0,
      orders: 40,
    });
    expect((await campaignStatus(env.ledger, "spring")).queued).toBe(40);

    await envs.work(env);
    await eventually(
      async () => (await campaignStatus(env.ledger, "spring")).completed === 40,
      "40 completed rows",
    );

    const again = await importCampaign({ file, campaign: "spring" }, deps);
    expect(again).toMatchObject({ enqueued: 0, already_known: 40, orders: 0 });
    await holdsFor(
      async () => (await sandboxOrders(env.sandbox)).length === 40,
      300,
      "the re-import sends nothing again",
    );

    const orders = await sandboxOrders(env.sandbox);
    expect(orders).toHaveLength(40);
    const emails = orders.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(new Set(emails).size).toBe(40);
    expect(await campaignStatus(env.ledger, "spring")).toMatchObject({
      total: 40,
      completed: 40,
      queued: 0,
      submitted: 0,
    });
  });

  it("packs rows into orders of up to N items of one currency", async () => {
    env = await envs.setup("pack", { asyncCompleteMs: 50 });
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 25 }));
    const deps = depsOf(env);
    const result = await importCampaign({ file, campaign: "packed", itemsPerOrder: 10 }, deps);
    expect(result).toMatchObject({ enqueued: 25, orders: 3 });
    await envs.work(env, { concurrency: 3 });
    await eventually(
      async () => (await campaignStatus(env.ledger, "packed")).completed === 25,
      "25 completed rows",
    );
    const orders = await sandboxOrders(env.sandbox);
    expect(orders.map((o) => o.items.length).sort()).toEqual([10, 10, 5]);
  });

  it("strict mode enqueues nothing when one row is invalid", async () => {
    env = await envs.setup("strict");
    const file = join(env.dataDir, "orders.csv");
    const good = sampleCsv(env.index, { rows: 3 });
    await writeFile(file, `${good}not-an-email,${Object.keys(env.index.entries)[0]},10\n`);
    const deps = depsOf(env);
    const refused = await importCampaign({ file, campaign: "strict" }, deps).catch((e) => e);
    expect(refused).toBeInstanceOf(ImportRefused);
    expect(refused.result.errors[0]).toMatchObject({ line: 5, column: "email" });
    expect(await env.queue.count()).toBe(0);
    expect(await env.ledger.campaigns.exists("strict")).toBe(false);
  });
});
