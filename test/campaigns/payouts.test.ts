import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { refreshPayouts } from "../../src/campaigns/payouts.js";
import { type REPORT_COLUMNS, writeReport } from "../../src/campaigns/report.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../helpers/campaign-env.js";
import { control } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "payday";

type Line = Record<(typeof REPORT_COLUMNS)[number], string>;

/** `orders payouts`: each completed row's payout status and expiry, in the ledger and report. */
describe("orders payouts", () => {
  const envs = useCampaignEnv({ asyncCompleteMs: 20 });

  async function paidCampaign(env: CampaignEnv, rows: number): Promise<void> {
    const path = join(env.dataDir, "rows.csv");
    await writeFile(path, sampleCsv(env.index, { rows, products: 2, referencePrefix: "p" }));
    // Orders of two rows: each row's item is found by its id in its order.
    await importCampaign(
      { file: path, campaign: CAMPAIGN, executionMode: "async", itemsPerOrder: 2 },
      depsOf(env),
    );
    await envs.work(env, { concurrency: 2, timings: FAST_TIMINGS });
    await eventually(
      async () => (await campaignStatus(env.ledger, CAMPAIGN)).completed === rows,
      "campaign completed",
    );
    await envs.stopWorkers();
  }

  async function report(env: CampaignEnv): Promise<Line[]> {
    const path = join(env.dataDir, "report.csv");
    await writeReport(env.ledger, CAMPAIGN, path);
    return parse(await readFile(path, "utf8"), { columns: true }) as Line[];
  }

  it("status and expiry per row; a claimed link shows CLAIMED, not in --unclaimed", async () => {
    const env = await envs.setup("payouts");
    await paidCampaign(env, 3);
    const before = await report(env);
    // The columns are appended: the report's earlier columns keep their places.
    expect(Object.keys(before[0]!).slice(0, 13).at(-1)).toBe("replayed");
    expect(Object.keys(before[0]!).slice(13)).toEqual(["payout_status", "expires_at", "repeat_of"]);

    const run = await giftjobs(env, ["orders", "payouts", "--campaign", CAMPAIGN, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ orders: 2, rows: 3, by_status: { ACTIVE: 3 } });
    const lines = await report(env);
    for (const line of lines) {
      expect(line.payout_status).toBe("ACTIVE");
      expect(Date.parse(line.expires_at)).toBeGreaterThan(Date.now());
    }
    // No URL is kept: the ledger holds status and expiry only.
    for await (const [, order] of env.ledger.orders.all(CAMPAIGN)) {
      expect(order.payout_urls).toBeUndefined();
      expect(JSON.stringify(order.payouts)).not.toContain("http");
    }

    // The recipient of the second row claims the link.
    const claimed = lines[1]!;
    await control(env.sandbox, "/_sandbox/payouts", {
      item_id: claimed.item_id,
      status: "CLAIMED",
    });
    await refreshPayouts(env.ledger, env.client, CAMPAIGN, { pace: { perMinute: 6000 } });
    const after = await report(env);
    expect(after.map((l) => l.payout_status)).toEqual(["ACTIVE", "CLAIMED", "ACTIVE"]);
    expect(after[1]!.expires_at).toBe(claimed.expires_at);

    const unclaimed = await giftjobs(env, [
      "orders",
      "payouts",
      "--campaign",
      CAMPAIGN,
      "--unclaimed",
    ]);
    expect(unclaimed.code, unclaimed.stderr).toBe(0);
    const listed = parse(unclaimed.stdout, { columns: true }) as Record<string, string>[];
    expect(listed.map((l) => l.line).sort()).toEqual([lines[0]!.line, lines[2]!.line].sort());
    expect(Object.keys(listed[0]!)).not.toContain("url");
    expect(unclaimed.stdout).not.toContain("http");
    const json = await giftjobs(env, [
      "orders",
      "payouts",
      "--campaign",
      CAMPAIGN,
      "--unclaimed",
      "--json",
    ]);
    expect(JSON.parse(json.stdout).rows).toEqual([
      expect.objectContaining({ item_id: lines[0]!.item_id, payout_status: "ACTIVE" }),
      expect.objectContaining({ item_id: lines[2]!.item_id, payout_status: "ACTIVE" }),
    ]);
  });

  it("an expired link, and the campaign's finished time stays as it was", async () => {
    const env = await envs.setup("payouts-expired");
    await paidCampaign(env, 2);
    const finished = (await env.ledger.campaigns.meta(CAMPAIGN)).finished_at;
    const [first] = await report(env);
    await control(env.sandbox, "/_sandbox/payouts", {
      item_id: first!.item_id,
      status: "EXPIRED",
      expiry_date: "2020-01-01T00:00:00Z",
    });
    const result = await refreshPayouts(env.ledger, env.client, CAMPAIGN, {
      pace: { perMinute: 6000 },
    });
    expect(result).toMatchObject({ orders: 1, rows: 2, by_status: { ACTIVE: 1, EXPIRED: 1 } });
    const [line] = await report(env);
    expect(line).toMatchObject({
      payout_status: "EXPIRED",
      expires_at: "2020-01-01T00:00:00.000Z",
    });
    expect((await env.ledger.campaigns.meta(CAMPAIGN)).finished_at).toBe(finished);
  });
});
