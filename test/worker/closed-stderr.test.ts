import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus, pendingRows } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, campaignEnv, cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { exited, spawnCli } from "../helpers/cli.js";
import { eventually } from "../helpers/wait-for.js";

/**
 * A long-running worker whose stderr's reader goes away (a closed terminal, a log shipper that
 * died: EPIPE on every log line) goes on sending: a log line it cannot write is dropped, no
 * order is stopped half way (docs/architecture/audit.md, "Output that cannot be written").
 */
describe("a worker whose stderr is closed", () => {
  let env: CampaignEnv | undefined;
  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  for (const when of ["before its first line", "after its first line"] as const)
    it(`still sends every order, closed ${when}, and stops cleanly`, async () => {
      env = await campaignEnv({ orderRateLimit: 100_000 }, "closed-stderr");
      const e = env;
      const worker = spawnCli(["worker", "--queues", "orders", "--concurrency", "4"], {
        ...cliEnvOf(e),
        // Every order logged: each is a write to the closed pipe.
        GIFTJOBS_LOG_LEVEL: "debug",
      });
      try {
        if (when === "after its first line")
          await eventually(async () => worker.output().includes("\n"), "the worker's first line");
        worker.stderr!.destroy();
        const file = join(e.dataDir, "orders.csv");
        await writeFile(file, sampleCsv(e.index, { rows: 30, products: 2 }));
        await importCampaign({ file, campaign: "quiet" }, depsOf(e));
        await eventually(
          async () => pendingRows(await campaignStatus(e.ledger, "quiet")) === 0,
          "every row at an end",
          60_000,
        );
        expect(worker.exitCode).toBeNull();
      } finally {
        worker.kill("SIGTERM");
      }
      expect(await exited(worker)).toBe(0);
      const status = await campaignStatus(e.ledger, "quiet");
      expect(status.completed).toBe(30);
    }, 90_000);
});
