import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPORT_COLUMNS, writeReport } from "../../src/campaigns/report.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { startWorkers } from "../../src/worker/start-workers.js";
import type { RunningWorkers } from "../../src/worker/worker-options.js";
import { type CampaignEnv, campaignEnv, FAST_TIMINGS, quietLog } from "../helpers/campaign-env.js";
import { cleanPrefix, uniquePrefix } from "../helpers/redis.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually } from "../helpers/wait-for.js";

/**
 * A campaign name and rows reused from another ledger (another Redis, a flushed one): the
 * service's idempotency cache answers with the orders it made for the first ledger. Those rows
 * must not pass silently as paid now: they are marked replayed.
 */
describe("replayed orders", () => {
  let env: CampaignEnv | undefined;
  const running: RunningWorkers[] = [];
  afterEach(async () => {
    for (const workers of running.splice(0)) await workers.close();
    await env?.dispose();
    env = undefined;
  });

  async function pay(e: CampaignEnv, prefix: string, file: string) {
    const config = { ...e.config, prefix };
    const ledger = new Ledger(e.redis, prefix);
    await importCampaign(
      { file, campaign: "reused" },
      // A data dir of its own: the journal of the other prefix's campaign is not read.
      {
        ledger,
        catalog: e.index,
        client: e.client,
        log: quietLog,
        stores: fileStores(await tmpDir("replay")),
      },
    );
    running.push(
      await startWorkers({ config, log: quietLog, queues: ["orders"], timings: FAST_TIMINGS }),
    );
    await eventually(
      async () => (await campaignStatus(ledger, "reused")).completed === 4,
      `campaign completed under ${prefix}`,
    );
    return ledger;
  }

  it("marks rows replayed when the service answers with orders made before the campaign", async () => {
    env = await campaignEnv({ asyncCompleteMs: 20 }, "replay");
    const e = env;
    const file = join(e.dataDir, "reused.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 4, referencePrefix: "emp" }));

    const first = await pay(e, e.config.prefix, file);
    expect((await campaignStatus(first, "reused")).replayed).toBe(0);

    // The same campaign name and rows in another ledger, later.
    const other = uniquePrefix("replay-other");
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await pay(e, other, file);
      const status = await campaignStatus(second, "reused");
      expect(status).toMatchObject({ completed: 4, replayed: 4 });
      // The service made 4 orders in all: nothing was paid twice, and nothing passed silently.
      expect(await sandboxOrders(e.sandbox)).toHaveLength(4);
      const report = join(e.dataDir, "report.csv");
      await writeReport(second, "reused", report);
      const lines = (await readFile(report, "utf8")).trim().split("\n");
      const at = REPORT_COLUMNS.indexOf("replayed");
      expect(lines[0]!.split(",")[at]).toBe("replayed");
      expect(lines.slice(1).every((line) => line.split(",")[at] === "yes")).toBe(true);
    } finally {
      await cleanPrefix(e.redis, other);
    }
  });
});
