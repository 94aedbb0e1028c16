import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { archiveCampaign } from "../../src/campaigns/archive.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../helpers/campaign-env.js";
import { item, orderBody, postOrder, stats } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const ONE_ATTEMPT = { attempts: 1, backoff: { type: "fixed", delay: 10 } };
/** The third row of `base` (and of `again`): the sandbox refuses it, failed_final, no order. */
const REFUSED = "recipient-000003@example.com";

/**
 * `orders reconcile` puts each order of the window in one class (docs/commands.md, "Reconcile"):
 * the campaign's, another campaign's (a suspect only when it pays a paid row again unrecorded),
 * a deliberate repeat (--allow-repeats), an untagged look-alike, the others. Real Redis, the
 * sandbox over HTTP; the sandbox counts the orders it was asked for (GET /v2/order/{id}).
 */
describe("orders reconcile: the classes of the window's orders", () => {
  const envs = useCampaignEnv();

  async function importFile(
    env: CampaignEnv,
    campaign: string,
    csv: string,
    allowRepeats?: boolean,
  ) {
    const file = join(env.dataDir, `${campaign}.csv`);
    await writeFile(file, csv);
    await importCampaign(
      {
        file,
        campaign,
        executionMode: "sync",
        jobOptions: ONE_ATTEMPT,
        allowRepeats,
      },
      depsOf(env),
    );
  }

  /**
   * `base` (3 rows, the third refused), `sibling` (6 rows, same card and amounts, other
   * people), `again` (base's file again, --allow-repeats).
   */
  async function threeCampaigns(env: CampaignEnv) {
    const base = sampleCsv(env.index, { rows: 3, products: 1, referencePrefix: "r" });
    await importFile(env, "base", base);
    const sibling = sampleCsv(env.index, {
      rows: 6,
      products: 1,
      referencePrefix: "s",
      domain: "example.org",
    });
    await importFile(env, "sibling", sibling);
    // The same people paid the same cards again, knowingly.
    await importFile(env, "again", base, true);
    await envs.work(env, { concurrency: 2, timings: FAST_TIMINGS });
    const rows = { base: 2, sibling: 6, again: 2 };
    for (const [campaign, n] of Object.entries(rows))
      await eventually(async () => {
        const status = await campaignStatus(env.ledger, campaign);
        return status.completed === n && status.queued + status.in_flight === 0;
      }, `${campaign} settled`);
    await envs.stopWorkers();
    const [email, code, face] = base.split("\n")[1]!.split(",") as [string, string, string];
    return { email, code, face: Number(face) };
  }

  /** `orders reconcile --json`, with the orders the sandbox was asked for meanwhile. */
  async function reconcile(env: CampaignEnv, campaign: string) {
    const before = (await stats(env.sandbox)).order_lookups;
    const run = await giftjobs(env, ["orders", "reconcile", "--campaign", campaign, "--json"]);
    const lookups = (await stats(env.sandbox)).order_lookups - before;
    const report = run.stdout ? JSON.parse(run.stdout) : undefined;
    return { code: run.code, stderr: run.stderr, report, lookups };
  }

  function classTotal(classes: Record<string, number | Record<string, number>>): number {
    return Object.values(classes).reduce<number>(
      (sum, n) => sum + (typeof n === "number" ? n : Object.values(n).reduce((a, b) => a + b, 0)),
      0,
    );
  }

  it("a sibling campaign and a deliberate repeat: 0 suspects, exit 0, nothing read", async () => {
    const env = await envs.setup("recon-classes", { refuseEmails: [REFUSED] });
    await threeCampaigns(env);

    const base = await reconcile(env, "base");
    expect(base.code, base.stderr).toBe(0);
    expect(base.report.classes).toEqual({
      campaign: 2,
      other_campaigns: { sibling: 6 },
      repeats: 2,
      suspects: 0,
      lookalikes: 0,
      others: 0,
      unidentified: 0,
    });
    expect(classTotal(base.report.classes)).toBe(base.report.service_orders);
    expect(base.report.suspects).toEqual([]);
    expect(base.report.lookalikes).toEqual([]);
    expect(base.report.repeats.map((r: { campaign: string }) => r.campaign)).toEqual([
      "again",
      "again",
    ]);
    const lines = base.report.repeats.map(
      (r: { items: { rows: { line: number }[] }[] }) => r.items[0]!.rows[0]!.line,
    );
    expect(lines.sort()).toEqual([2, 3]);
    // Every order is held by a ledger of this Redis: none is read from the service.
    expect(base.lookups).toBe(0);
    expect(base.report.requests).toBe(base.report.pages);

    // Seen from the later campaign, the earlier one's orders are the repeats.
    const again = await reconcile(env, "again");
    expect(again.code, again.stderr).toBe(0);
    expect(again.report.classes).toMatchObject({ campaign: 2, repeats: 2, suspects: 0 });
    expect(again.lookups).toBe(0);

    const text = await giftjobs(env, ["orders", "reconcile", "--campaign", "base"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      "orders of the window: this campaign's 2, other campaigns' 6 (sibling 6), deliberate repeats 2\n",
    );
    expect(text.stdout).toContain(
      "deliberate repeats (recorded with --allow-repeats; no disagreement): 2 (again 2)",
    );
    expect(text.stdout).toContain("the service and the ledger agree");

    // Each run is in the audit trail, with the counts it found.
    const audit = await giftjobs(env, ["audit", "--campaign", "base", "--json"]);
    expect(audit.code, audit.stderr).toBe(0);
    const runs = (JSON.parse(audit.stdout) as { action: string; details: object }[]).filter(
      (entry) => entry.action === "reconcile",
    );
    expect(runs).toHaveLength(2);
    expect(runs[0]?.details).toMatchObject({ agree: true, suspects: 0, repeats: 2, lookalikes: 0 });
  });

  it("an untagged order to a recipient: exit 1, named; an unrecorded campaign's: a suspect", async () => {
    const env = await envs.setup("recon-suspects", { refuseEmails: [REFUSED] });
    const row = await threeCampaigns(env);
    const meta = Object.values(env.index.entries).find((e) => e.code === row.code)!;
    const post = async (email: string, extra: Record<string, unknown> = {}) => {
      const body = orderBody(meta.currency, [item(row.code, row.face, email)], extra);
      const answer = await postOrder(env.sandbox, body, { mode: "sync" });
      expect(answer.status, answer.text).toBeLessThan(300);
      return answer.json as { id: string };
    };
    env.sandbox.setFaults({ refuseEmails: [] });
    const byHand = await post(row.email);
    const ghost = await post("recipient-000002@example.com", {
      metadata: { giftjobs_campaign: "ghost", giftjobs_key: "ghost-key-1" },
    });
    const someoneElse = await post("someone.else@example.net");
    // Another campaign paying the refused row's recipient: that row has no order of its own.
    const paysRefused = await post(REFUSED, {
      metadata: { giftjobs_campaign: "ghost", giftjobs_key: "ghost-key-2" },
    });

    const base = await reconcile(env, "base");
    expect(base.code, base.stderr).toBe(1);
    expect(base.report.classes).toEqual({
      campaign: 2,
      other_campaigns: { ghost: 1, sibling: 6 },
      repeats: 2,
      suspects: 1,
      lookalikes: 1,
      others: 1,
      unidentified: 0,
    });
    expect(classTotal(base.report.classes)).toBe(base.report.service_orders);
    expect(base.report.lookalikes).toEqual([
      expect.objectContaining({
        order_id: byHand.id,
        items: [
          expect.objectContaining({
            email: "r***@example.com",
            rows_count: 1,
            rows: [{ line: 2, status: "completed" }],
          }),
        ],
      }),
    ]);
    expect(base.report.suspects).toEqual([
      expect.objectContaining({
        order_id: ghost.id,
        campaign: "ghost",
        items: [expect.objectContaining({ rows: [{ line: 3, status: "completed" }] })],
      }),
    ]);
    expect(JSON.stringify(base.report)).not.toContain(someoneElse.id);
    expect(JSON.stringify(base.report)).not.toContain(paysRefused.id);
    // Read: the four orders no ledger holds, and nothing else.
    expect(base.lookups).toBe(4);

    const text = await giftjobs(env, ["orders", "reconcile", "--campaign", "base"]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toContain("POSSIBLE DUPLICATES (untagged orders");
    expect(text.stdout).toContain(`${byHand.id} COMPLETED`);
    expect(text.stdout).toContain("SUSPECTS (orders of other campaigns");
    expect(text.stdout).toContain("(made by campaign ghost)");
    expect(text.stdout).toContain("pays again 1 row: completed: line 3");
    expect(text.stdout).not.toContain(row.email);

    // An archived repeat campaign's orders are read from the service; its archive keeps the
    // marks: still repeats, never suspects.
    await archiveCampaign(env.ledger, "again", { dataDir: env.dataDir });
    const later = await reconcile(env, "base");
    expect(later.report.classes).toMatchObject({ repeats: 2, suspects: 1, lookalikes: 1 });
    expect(later.lookups).toBe(6);
  });
});
