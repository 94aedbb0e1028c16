import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importCampaign } from "../../src/import/import-campaign.js";
import { type CampaignEnv, campaignEnv, depsOf } from "../helpers/campaign-env.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { findGc } from "../helpers/gc.js";

const ROWS = 200_000;

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("importing a large file", () => {
  it(`imports ${ROWS.toLocaleString("en-US")} rows with bounded memory`, {
    timeout: 120_000,
  }, async () => {
    env = await campaignEnv({ products: 300 }, "large");
    const file = join(env.dataDir, "large.csv");
    await writeLargeCsv(env.index, file, ROWS);
    const gc = findGc();
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    // Live heap (after a full gc) every 20,000 rows: what the importer holds, garbage excluded.
    let livePeak = heapBefore;
    let nextCheck = 20_000;
    const onProgress = ({ rows }: { rows: number }) => {
      if (!gc || rows < nextCheck) return;
      nextCheck += 20_000;
      gc();
      livePeak = Math.max(livePeak, process.memoryUsage().heapUsed);
    };
    let rssPeak = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      heapPeak = Math.max(heapPeak, m.heapUsed);
      rssPeak = Math.max(rssPeak, m.rss);
    }, 50);
    const started = performance.now();
    try {
      const result = await importCampaign({ file, campaign: "large", onProgress }, depsOf(env));
      expect(result).toMatchObject({ rows: ROWS, valid: ROWS, enqueued: ROWS, orders: ROWS });
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const mb = (bytes: number) => bytes / 2 ** 20;
    const growthMb = mb(heapPeak - heapBefore);
    const liveMb = mb(livePeak - heapBefore);
    process.stderr.write(
      `large import: ${ROWS} rows in ${seconds.toFixed(1)} s, heap growth ${growthMb.toFixed(0)} MB (live ${gc ? liveMb.toFixed(0) : "?"} MB), peak RSS ${mb(rssPeak).toFixed(0)} MB\n`,
    );
    // Holding the rows or their jobs would take several hundred MB. The importer keeps one
    // entry per reference (tens of MB here); the sampled heap also counts garbage not yet
    // collected, hence the generous bound on it.
    expect(growthMb).toBeLessThan(200);
    if (gc) expect(liveMb).toBeLessThan(60);
    expect(await env.ledger.campaigns.counts("large")).toMatchObject({ total: ROWS, queued: ROWS });
    expect(await env.ledger.dispatch.pendingCount("large")).toBe(ROWS);
    expect(await env.queue.count()).toBe(0);
  });
});
