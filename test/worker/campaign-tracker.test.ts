import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { pauseCampaign, resumeCampaign } from "../../src/campaigns/control.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { createLogger } from "../../src/log.js";
import { CampaignTracker } from "../../src/worker/campaign-tracker.js";
import { type CampaignEnv, campaignEnv, depsOf } from "../helpers/campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

function capture() {
  const messages: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      messages.push((JSON.parse(String(chunk)) as { msg: string }).msg);
      cb();
    },
  });
  return { messages, log: createLogger({ destination, pretty: false }) };
}

describe("campaign tracker", () => {
  let env: CampaignEnv | undefined;
  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  it("logs started, a pause once, running again, progress by 5%, and done with totals", async () => {
    env = await campaignEnv({}, "tracker");
    const e = env;
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 20 }));
    await importCampaign({ file, campaign: "t" }, depsOf(e));
    const { messages, log } = capture();
    // The ticks are the test's own; the interval is long, so progress lines come by 5% steps.
    const tracker = new CampaignTracker({ ledger: e.ledger, log, tickMs: 1e9, intervalMs: 1e9 });
    tracker.touch("t");
    tracker.touch("t");
    await eventually(async () => messages.length === 1, "started");
    expect(messages).toEqual(["campaign t: started sending (0 of 20 rows done)"]);

    await pauseCampaign(e.ledger, "t", "checking the budget");
    await tracker.tick();
    await tracker.tick();
    expect(messages.slice(1)).toEqual([
      "campaign t: paused (checking the budget), 0 of 20 rows done",
    ]);
    await resumeCampaign(e.ledger, "t");
    await tracker.tick();
    expect(messages.slice(2)).toEqual(["campaign t: running again"]);

    const keys: number[] = [];
    for await (const [number] of e.ledger.orders.all("t")) keys.push(number);
    for (const key of keys.slice(0, 10))
      await e.ledger.orders.transition({
        campaign: "t",
        number: key,
        from: ["queued"],
        to: "completed",
      });
    await tracker.tick();
    await tracker.tick();
    expect(messages.slice(3)).toHaveLength(1);
    expect(messages[3]).toMatch(
      /^campaign t: 10\/20 rows done \(50%\), [\d.]+ rows\/s, ETA .+, 0 failed$/,
    );

    for (const key of keys.slice(10))
      await e.ledger.orders.transition({
        campaign: "t",
        number: key,
        from: ["queued"],
        to: "failed_final",
        patch: { error_type: "x" },
      });
    await tracker.tick();
    await tracker.tick();
    expect(messages.slice(4)).toHaveLength(1);
    expect(messages[4]).toMatch(
      /^campaign t: done, 10 completed, 10 failed_final, 0 failed_uncertain, 0 cancelled of 20 rows/,
    );
    await tracker.close();
  });
});
