import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { archiveCampaign, restoreCampaign } from "../../src/campaigns/archive.js";
import { REPORT_COLUMNS, writeReport } from "../../src/campaigns/report.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { journalPath } from "../../src/orders/journal.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, shuffleLines } from "../helpers/csv.js";
import { CAMPAIGN, PER_ORDER, ROWS, useLostLedger } from "../helpers/lost-ledger.js";
import { eventually } from "../helpers/wait-for.js";

/**
 * docs/architecture/keys-and-exactly-once.md, "Lost ledger": a campaign built over two imports with
 * packing, its Redis keys lost at some point, the whole file imported again: every row is paid
 * once.
 */
describe("a lost ledger never pays twice", () => {
  const {
    setup,
    stopWorkers,
    twoImports,
    work,
    completed,
    payAboutSixtyPercent,
    loseRedis,
    reimport,
    importWithoutLastRow,
    runToEnd,
    expectPaidOnce,
  } = useLostLedger();

  /** The report: every row once, completed; `replayed` exactly for rows paid before the loss. */
  async function expectReport(e: CampaignEnv, paidBefore: number): Promise<void> {
    const status = await campaignStatus(e.ledger, CAMPAIGN);
    expect(status).toMatchObject({ state: "done", total: ROWS, completed: ROWS });
    const out = join(e.dataDir, "report.csv");
    await writeReport(e.ledger, CAMPAIGN, out);
    const lines = (await readFile(out, "utf8")).trimEnd().split("\n").slice(1);
    expect(lines).toHaveLength(ROWS);
    expect(new Set(lines.map((line) => line.split(",")[1])).size).toBe(ROWS);
    expect(lines.every((line) => line.split(",")[6] === "completed")).toBe(true);
    const at = REPORT_COLUMNS.indexOf("replayed");
    const replayed = lines.filter((line) => line.split(",")[at] === "yes").length;
    // Rows paid before the loss come back as the service's replays, and say so.
    expect(replayed).toBe(status.replayed);
    if (paidBefore === 0) expect(replayed).toBe(0);
    else expect(replayed).toBeGreaterThanOrEqual(paidBefore);
  }

  it("Redis lost at about 60%, the whole file imported again: each row paid once", async () => {
    const e = await setup("lost60", { asyncCompleteMs: 20 });
    const whole = await twoImports(e);
    const before = await payAboutSixtyPercent(e);
    await loseRedis(e);
    await reimport(e, whole);
    await runToEnd(e);
    await expectPaidOnce(e);
    await expectReport(e, before);
  });

  it("Redis lost before any order is sent: each row paid once, none replayed", async () => {
    const e = await setup("lost0", { asyncCompleteMs: 20 });
    const whole = await twoImports(e);
    await loseRedis(e);
    await reimport(e, whole);
    await runToEnd(e);
    await expectPaidOnce(e);
    await expectReport(e, 0);
  });

  it("Redis lost after every row completed: the re-import only hears replays", async () => {
    const e = await setup("lost100", { asyncCompleteMs: 20 });
    const whole = await twoImports(e);
    await runToEnd(e);
    await loseRedis(e);
    await reimport(e, whole);
    await runToEnd(e);
    await expectPaidOnce(e);
    await expectReport(e, ROWS);
  });

  it("Redis lost under running workers: every row paid before the loss shows replayed", async () => {
    // The workers run across the loss and the re-import: what a process read of the campaign
    // before (its created_at) must not decide what is replayed after.
    const e = await setup("lost-live", { asyncCompleteMs: 20 });
    const whole = await twoImports(e);
    await work(e, 300);
    await eventually(async () => (await completed(e)) >= ROWS * 0.6, "60% completed", 60_000);
    const paidBefore = new Set<string>();
    for await (const [, order] of e.ledger.orders.all(CAMPAIGN))
      if (order.status === "completed") for (const id of order.identities) paidBefore.add(id);
    await loseRedis(e);
    await reimport(e, whole);
    await eventually(async () => (await completed(e)) === ROWS, "every row completed", 60_000);
    await stopWorkers();
    await expectPaidOnce(e);
    const replayed = new Set<string>();
    for await (const [, order] of e.ledger.orders.all(CAMPAIGN))
      if (order.replayed) for (const id of order.identities) replayed.add(id);
    expect([...paidBefore].filter((id) => !replayed.has(id))).toEqual([]);
    await expectReport(e, paidBefore.size);
    const shown = await giftjobs(e, ["orders", "status", "--campaign", CAMPAIGN]);
    expect(shown.stdout).toContain(
      `  WARNING: ${replayed.size.toLocaleString("en-US")} rows were replayed: the service answered with orders made before this campaign was imported\n`,
    );
  });

  it("a shuffled copy after the loss rebuilds every order under its key", async () => {
    const e = await setup("lost-keys");
    const whole = await twoImports(e);
    const keys = async () => {
      const found: string[] = [];
      for await (const [, order] of e.ledger.orders.all(CAMPAIGN)) found.push(order.key);
      return found.sort();
    };
    const before = await keys();
    expect(before).toHaveLength(ROWS / PER_ORDER);
    await loseRedis(e);
    const shuffled = await csvFile(e, "shuffled.csv", shuffleLines(await readFile(whole, "utf8")));
    await reimport(e, shuffled);
    expect(await keys()).toEqual(before);
  });

  it("refuses, writing nothing, rows whose journal order this file does not have whole", async () => {
    const e = await setup("lost-part");
    const whole = await twoImports(e);
    await loseRedis(e);
    const refusal = await importWithoutLastRow(e, await readFile(whole, "utf8"));
    expect(refusal).toMatch(
      /^49 rows of this file were recorded in 1 order of campaign lost \(.*orders\.ndjson\) together with 1 row this import does not have/,
    );
    // Orders of 50 cannot be sync orders: refused too, rather than packed anew.
    const sync = await importCampaign(
      { file: whole, campaign: CAMPAIGN, executionMode: "sync" },
      depsOf(e),
    ).catch((err: unknown) => err);
    expect(sync).toBeInstanceOf(ImportRefused);
    expect((sync as Error).message).toMatch(/orders of up to 50 items .* --execution-mode async/);
    expect(await e.ledger.campaigns.exists(CAMPAIGN)).toBe(false);
  });

  it("archive and restore keep the journal", async () => {
    const e = await setup("lost-arch", { asyncCompleteMs: 20 });
    await twoImports(e);
    await runToEnd(e);
    const path = journalPath(e.dataDir, CAMPAIGN);
    const journal = await readFile(path, "utf8");
    expect(journal.trimEnd().split("\n")).toHaveLength(ROWS / PER_ORDER);
    await archiveCampaign(e.ledger, CAMPAIGN, { dataDir: e.dataDir });
    expect(await readFile(path, "utf8")).toBe(journal);
    await restoreCampaign(e.ledger, CAMPAIGN);
    expect(await readFile(path, "utf8")).toBe(journal);
  });
});
