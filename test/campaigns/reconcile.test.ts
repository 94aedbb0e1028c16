import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reconcileCampaign } from "../../src/campaigns/reconcile.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import type { LedgerOrder } from "../../src/ledger/types.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../helpers/campaign-env.js";
import { control, postOrder, sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "recon";
const ONE_ATTEMPT = { attempts: 1, backoff: { type: "fixed", delay: 10 } };
/** Fast reads for the library calls; the CLI runs keep the default budget. */
const FAST_READS = { perMinute: 6000 };

/**
 * `orders reconcile` against the sandbox over HTTP: orders the ledger does not know, ledger
 * orders the service lost, failed_uncertain orders found made or found absent
 * (docs/architecture/keys-and-exactly-once.md, "Reconciling with the service").
 */
describe("orders reconcile", () => {
  const envs = useCampaignEnv();

  async function importRows(env: CampaignEnv, rows: number) {
    const path = join(env.dataDir, "rows.csv");
    await writeFile(path, sampleCsv(env.index, { rows, products: 1, referencePrefix: "r" }));
    await importCampaign(
      { file: path, campaign: CAMPAIGN, executionMode: "sync", jobOptions: ONE_ATTEMPT },
      depsOf(env),
    );
  }

  async function runUntil(env: CampaignEnv, done: (s: Record<string, number>) => boolean) {
    await envs.work(env, { concurrency: 1, timings: FAST_TIMINGS });
    await eventually(
      async () => done((await campaignStatus(env.ledger, CAMPAIGN)) as never),
      "campaign settled",
    );
    await envs.stopWorkers();
  }

  async function orders(env: CampaignEnv): Promise<Map<number, LedgerOrder>> {
    const all = new Map<number, LedgerOrder>();
    for await (const [number, order] of env.ledger.orders.all(CAMPAIGN)) all.set(number, order);
    return all;
  }

  async function onlyOrder(env: CampaignEnv): Promise<[number, LedgerOrder]> {
    const all = [...(await orders(env))];
    expect(all).toHaveLength(1);
    return all[0]!;
  }

  const reconcile = (env: CampaignEnv, minAgeMs?: number) =>
    reconcileCampaign(env.ledger, env.client, CAMPAIGN, {
      apiKey: env.client.keyFingerprint,
      pace: FAST_READS,
      ...(minAgeMs !== undefined ? { minAgeMs } : {}),
    });

  it("a clean completed campaign: all agree, exit 0", async () => {
    const env = await envs.setup("recon-clean");
    await importRows(env, 3);
    await runUntil(env, (s) => s.completed === 3);
    // Its orders name the campaign and their key (a new campaign is tagged).
    for (const order of (await orders(env)).values())
      expect(order.metadata).toMatchObject({
        giftjobs_campaign: CAMPAIGN,
        giftjobs_key: order.key,
      });
    const run = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      agree: true,
      service_orders: 3,
      unknown_to_ledger: [],
      missing_on_service: [],
      status_disagreements: [],
      uncertain: [],
    });
  });

  it("finds an order made outside the ledger and one the service never made: exit 1", async () => {
    const env = await envs.setup("recon-diff");
    await importRows(env, 3);
    await runUntil(env, (s) => s.completed === 3);
    const all = await orders(env);
    const first = all.get(1)!;
    // The same body posted by hand under another idempotency key: the ledger never hears of it.
    const rows = await env.ledger.orders.getRows(CAMPAIGN, first.identities);
    const outside = await postOrder(env.sandbox, requestFromLedger(first, rows), {
      mode: "sync",
      key: "by-hand-1",
    });
    expect(outside.status).toBe(200);
    // And the service loses the order of ledger order 2.
    const lost = all.get(2)!.order_id!;
    await control(env.sandbox, "/_sandbox/orders/forget", { order_id: lost });

    const run = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN, "--json"]);
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.agree).toBe(false);
    expect(report.unknown_to_ledger).toEqual([
      expect.objectContaining({
        order_id: outside.json.id,
        status: "COMPLETED",
        ledger_order: 1,
        ledger_status: "completed",
        lines: [rows[0]!.line],
      }),
    ]);
    expect(report.missing_on_service).toEqual([
      expect.objectContaining({ ledger_order: 2, order_id: lost, ledger_status: "completed" }),
    ]);
    const text = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(outside.json.id);
    expect(text.stdout).toContain(lost);
  });

  it("a failed_uncertain order the service made: completed, its money moves back", async () => {
    // The order is made, then the answer is a 500: one attempt, so the rows end uncertain.
    const env = await envs.setup("recon-made", { failAfterRate: 1 });
    await importRows(env, 1);
    await runUntil(env, (s) => s.failed_uncertain === 1);
    const [number, before] = await onlyOrder(env);
    expect(before).toMatchObject({ status: "failed_uncertain", unclear: expect.any(String) });
    const field = (name: string) => `${name}:${before.currency}` as "spent:USD";
    const meta = await env.ledger.campaigns.meta(CAMPAIGN);
    expect(meta[field("uncertain")]).toBe(before.price);
    expect(meta[field("spent")] ?? "0").toBe("0");

    const report = await reconcile(env);
    const [made] = await sandboxOrders(env.sandbox);
    expect(report.uncertain).toEqual([
      expect.objectContaining({ ledger_order: number, outcome: "completed", order_id: made!.id }),
    ]);
    expect(report.agree).toBe(true);
    const after = (await env.ledger.orders.getOrder(CAMPAIGN, number))!;
    expect(after).toMatchObject({ status: "completed", order_id: made!.id });
    expect(after.unclear).toBeUndefined();
    expect(after.item_ids).toHaveLength(1);
    const money = await env.ledger.campaigns.meta(CAMPAIGN);
    expect(money[field("uncertain")]).toBe("0");
    expect(money[field("spent")]).toBe(before.price);
    expect(await campaignStatus(env.ledger, CAMPAIGN)).toMatchObject({
      completed: 1,
      failed_uncertain: 0,
    });
    // Nothing more to settle: a second run agrees and changes nothing.
    expect((await reconcile(env)).uncertain).toEqual([]);
  });

  it("an uncertain order the service never made: absent, then --new-key, no --include-uncertain", async () => {
    // A 500 before anything is made, one attempt: uncertain, though nothing exists.
    const env = await envs.setup("recon-absent", { failRate: 1 });
    await importRows(env, 1);
    await runUntil(env, (s) => s.failed_uncertain === 1);
    const [number, before] = await onlyOrder(env);

    // Too soon after its last attempt to call it absent.
    const early = await reconcile(env);
    expect(early.uncertain).toEqual([
      expect.objectContaining({ ledger_order: number, outcome: "undecided" }),
    ]);
    expect(early.agree).toBe(false);
    // Without a reconcile that found it absent, --new-key leaves it alone.
    const refused = await retryCampaign(env.ledger, CAMPAIGN, {
      newKey: true,
      stores: fileStores(env.dataDir),
    });
    expect(refused).toMatchObject({ orders: 0, absent: 0 });
    expect(await env.ledger.orders.getOrder(CAMPAIGN, number)).toMatchObject({ key: before.key });

    const report = await reconcile(env, 0);
    expect(report.uncertain).toEqual([
      expect.objectContaining({ ledger_order: number, outcome: "absent" }),
    ]);
    expect(report.agree).toBe(true);
    expect(await env.ledger.orders.getOrder(CAMPAIGN, number)).toMatchObject({
      status: "failed_uncertain",
      reconciled_api_key: env.client.keyFingerprint,
      reconciled_absent_at: report.window.listed_at,
    });

    const moved = await retryCampaign(env.ledger, CAMPAIGN, {
      newKey: true,
      stores: fileStores(env.dataDir),
      apiKey: env.client.keyFingerprint,
    });
    expect(moved).toMatchObject({ orders: 1, absent: 1, unclear: 0 });
    env.sandbox.setFaults({ failRate: 0 });
    await runUntil(env, (s) => s.completed === 1);
    // Paid once, under the next generation's key, which its metadata names.
    const made = await sandboxOrders(env.sandbox);
    expect(made).toHaveLength(1);
    const now = [...(await orders(env)).values()].find((o) => o.status === "completed")!;
    expect(now.generation).toBe(before.generation + 1);
    expect(made[0]!.idempotency_key).toBe(now.key);
    expect(now.metadata?.giftjobs_key).toBe(now.key);
    const meta = await env.ledger.campaigns.meta(CAMPAIGN);
    expect(meta[`uncertain:${before.currency}` as "uncertain:USD"]).toBe("0");
    expect(meta[`spent:${before.currency}` as "spent:USD"]).toBe(before.price);
  });

  it("an absent record goes when the order is retried under its same key", async () => {
    const env = await envs.setup("recon-stale", { failRate: 1 });
    await importRows(env, 1);
    await runUntil(env, (s) => s.failed_uncertain === 1);
    const [number] = await onlyOrder(env);
    await reconcile(env, 0);
    expect(
      (await env.ledger.orders.getOrder(CAMPAIGN, number))?.reconciled_absent_at,
    ).toBeDefined();
    // Sent again under the same key (it fails again): that attempt may have made an order.
    await retryCampaign(env.ledger, CAMPAIGN, {});
    await runUntil(env, (s) => s.failed_uncertain === 1);
    const again = (await env.ledger.orders.getOrder(CAMPAIGN, number))!;
    expect(again.reconciled_absent_at).toBeUndefined();
    const refused = await retryCampaign(env.ledger, CAMPAIGN, {
      newKey: true,
      stores: fileStores(env.dataDir),
    });
    expect(refused).toMatchObject({ orders: 0, absent: 0 });
    expect(await env.ledger.orders.getOrder(CAMPAIGN, number)).toMatchObject({
      status: "failed_uncertain",
      generation: 0,
    });
  });
});
