import { describe, expect, it } from "vitest";
import { cancelCampaign, pauseCampaign, resumeCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

/**
 * Rows with send_at (issue: "Spreadsheets as people have them"): their orders are created at
 * that time, not before; status and list show them; pause and cancel apply to them.
 */
const { setup, work } = useCampaignEnv({ asyncCompleteMs: 50 });

/** The CSV of `rows` valid rows, with a send_at column: `sendAt(i)` for row i ("" for none). */
function scheduledCsv(e: CampaignEnv, rows: number, sendAt: (i: number) => string) {
  const [header, ...lines] = validCsv(e.index, rows, "s").text.trimEnd().split("\n");
  return `${header},send_at\n${lines.map((line, i) => `${line},${sendAt(i)}`).join("\n")}\n`;
}

const iso = (ms: number) => new Date(ms).toISOString();
const status = (e: CampaignEnv, campaign: string) => campaignStatus(e.ledger, campaign);

describe("scheduled rows (send_at)", () => {
  it("sends a scheduled row at its time and not before; an unscheduled one at once", async () => {
    const e = await setup("send-at");
    const at = Date.now() + 5000;
    const file = await csvFile(
      e,
      "a.csv",
      scheduledCsv(e, 3, (i) => (i === 0 ? "" : iso(at))),
    );
    await importCampaign({ file, campaign: "sched", balanceCheck: false }, depsOf(e));
    expect(await status(e, "sched")).toMatchObject({
      queued: 3,
      scheduled: 2,
      next_send_at: iso(at),
    });

    await work(e);
    await eventually(async () => (await status(e, "sched")).completed >= 1, "the unscheduled row");

    await eventually(
      async () => (await status(e, "sched")).completed === 3,
      "the scheduled rows",
      20_000,
    );
    const orders = await sandboxOrders(e.sandbox);
    expect(orders).toHaveLength(3);
    // By the service's clock: the unscheduled row's order made before `at`, the others not before.
    const made = orders.map((o) => Date.parse(o.created_at)).sort((a, b) => a - b);
    expect(made[0]).toBeLessThan(at);
    expect(made[1]).toBeGreaterThanOrEqual(at);
    expect(await status(e, "sched")).toMatchObject({ scheduled: 0, next_send_at: null });
  });

  it("packs rows of one send_at together, never rows of two", async () => {
    const e = await setup("send-at-pack");
    const first = Date.now() + 60_000;
    const file = await csvFile(
      e,
      "b.csv",
      scheduledCsv(e, 6, (i) => (i < 3 ? iso(first) : iso(first + 60_000))),
    );
    const result = await importCampaign(
      { file, campaign: "packed", itemsPerOrder: 50, balanceCheck: false },
      depsOf(e),
    );
    expect(result).toMatchObject({ enqueued: 6, orders: 2 });
    const list = await giftjobs(e, ["orders", "list", "--json"]);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ campaign: "packed", scheduled: 6, next_send_at: iso(first) }),
    ]);
    const sendAts = [];
    for await (const [, order] of e.ledger.orders.all("packed"))
      sendAts.push([order.identities.length, order.send_at]);
    expect(sendAts.sort()).toEqual([
      [3, first],
      [3, first + 60_000],
    ]);
  });

  it("a paused campaign sends its due rows only after resume; cancel cancels rows still scheduled", async () => {
    const e = await setup("send-at-control");
    const soon = Date.now() + 1500;
    const later = Date.now() + 60_000;
    const file = await csvFile(
      e,
      "c.csv",
      scheduledCsv(e, 4, (i) => iso(i < 2 ? soon : later)),
    );
    await importCampaign({ file, campaign: "ctl", balanceCheck: false }, depsOf(e));
    await pauseCampaign(e.ledger, "ctl");
    await work(e);
    // A second past the rows' time: the dispatcher has seen them due, and sent none.
    await holdsFor(
      async () => (await sandboxOrders(e.sandbox)).length === 0,
      soon - Date.now() + 1000,
      "the paused campaign sends no due row",
    );
    await resumeCampaign(e.ledger, "ctl");
    await eventually(async () => (await status(e, "ctl")).completed === 2, "the due rows");

    await cancelCampaign(e.ledger, "ctl");
    expect(await status(e, "ctl")).toMatchObject({
      state: "cancelled",
      completed: 2,
      cancelled: 2,
      queued: 0,
      scheduled: 0,
      next_send_at: null,
    });
    expect(await sandboxOrders(e.sandbox)).toHaveLength(2);
  });

  it("refuses a bad send_at with its line, and more than 90 days ahead", async () => {
    const e = await setup("send-at-bad");
    const far = Date.now() + 100 * 24 * 3600 * 1000;
    const file = await csvFile(
      e,
      "d.csv",
      scheduledCsv(e, 2, (i) => (i === 0 ? "2026-12-24T09:00" : iso(far).slice(0, 10))),
    );
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "bad", "--yes"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("line 2");
    expect(run.stderr).toContain("has no time zone");
    expect(run.stderr).toContain("more than 90 days ahead");
    expect(await e.ledger.campaigns.exists("bad")).toBe(false);
  });
});
