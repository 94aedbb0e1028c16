// The worker's own pauses are recorded once per pause (docs/architecture/audit.md, "What is
// recorded"): a budget passed at send time pauses the campaign, and one auto_pause entry says so.
import { describe, expect, it } from "vitest";
import { FileAuditTrail } from "../../src/audit/file-trail.js";
import { approveCampaign } from "../../src/campaigns/control.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { depsOf } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const { setup, work } = useCampaignEnv();

describe("a campaign the worker pauses", () => {
  it("is recorded once, with the reason's type", async () => {
    const e = await setup("auto-pause");
    const { text, currency } = validCsv(e.index, 4, "ap");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign(
      { file, campaign: "p", hold: true, budget: [`100000:${currency}`] },
      depsOf(e),
    );
    const planned = (await e.ledger.campaigns.meta("p"))[`planned_price:${currency}`]!;
    await e.ledger.campaigns.setMeta("p", { [`budget:${currency}`]: String(BigInt(planned) - 1n) });
    await approveCampaign(e.ledger, "p");
    await work(e);
    await eventually(
      async () => (await e.ledger.campaigns.meta("p")).state === "paused",
      "campaign paused",
    );
    const trail = new FileAuditTrail(e.dataDir);
    const paused = () => trail.list({ campaign: "p" });
    await eventually(async () => (await paused()).length === 1, "one audit entry");
    await holdsFor(async () => (await paused()).length === 1, 300, "one entry, no second pause");
    const entries = await paused();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: "auto_pause",
      result: "ok",
      details: { by: "worker", reason_type: "budget_exceeded" },
    });
    expect(entries[0]!.where).toMatch(/ pid \d+$/);
  });
});
