// giftjobs_orders_total counts every order that reached an end exactly once, whoever moved it:
// the webhook receiver (a process of its own here, with no orders counter of its own), a
// worker's status follower, or both racing. Real workers, receiver, sandbox over HTTP, Redis.
import { afterEach, describe, expect, it } from "vitest";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { type RunningMetrics, startMetrics } from "../../src/metrics/start-metrics.js";
import { stats } from "../helpers/sandbox.js";
import { importRows, rowsEnded, useWebhookEnv, type WebhookEnv } from "../helpers/webhook-env.js";

const ENDS = ["completed", "failed_final", "failed_uncertain", "cancelled"] as const;

/** `giftjobs_orders_total{outcome}` of one scrape of `metrics`. */
async function ordersTotal(metrics: RunningMetrics): Promise<Record<string, number>> {
  const text = await (await fetch(metrics.url, { signal: AbortSignal.timeout(10_000) })).text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^giftjobs_orders_total\{outcome="(\w+)"\} (\d+)$/gm))
    out[match[1]!] = Number(match[2]);
  return out;
}

async function lookups(w: WebhookEnv): Promise<number> {
  return (await stats(w.env.sandbox)).order_lookups;
}

describe("giftjobs_orders_total: every end once, whoever moved it", () => {
  const { setup } = useWebhookEnv();
  let metrics: RunningMetrics | undefined;
  // Registered after the env's: runs before it.
  afterEach(async () => {
    await metrics?.close();
    metrics = undefined;
  });

  /** The totals of a scrape equal the ledger's counts (one row per order), and a second adds nothing. */
  async function expectTotalsOf(w: WebhookEnv, campaign: string, rows: number): Promise<void> {
    const status = await campaignStatus(w.env.ledger, campaign);
    const totals = await ordersTotal(metrics!);
    for (const end of ENDS) expect(totals[end], end).toBe(status[end]);
    expect(ENDS.reduce((sum, end) => sum + totals[end]!, 0)).toBe(rows);
    expect(await ordersTotal(metrics!)).toEqual(totals);
    // Another endpoint (a second worker's) finds nothing left to claim.
    const other = await startMetrics({ config: w.env.config, port: 0 });
    try {
      expect(await ordersTotal(other)).toEqual({
        completed: 0,
        failed_final: 0,
        failed_uncertain: 0,
        cancelled: 0,
      });
    } finally {
      await other.close();
    }
  }

  it("a campaign completed by webhooks alone (the receiver's own process moved them)", async () => {
    const w = await setup(
      "ended-hooks",
      { orderRateLimit: 100_000, asyncFailRate: 0.1 },
      { webhookFaults: { duplicates: 0.3, outOfOrder: 0.2, drop: 0, delayMs: 0 } },
    );
    metrics = await startMetrics({ config: w.env.config, port: 0 });
    await importRows(w, "hooked", 60);
    await w.work(60_000);
    await rowsEnded(w, "hooked", 60);
    expect(await lookups(w)).toBe(0);
    const status = await campaignStatus(w.env.ledger, "hooked");
    expect(status.completed).toBeGreaterThan(0);
    expect(status.failed_final).toBeGreaterThan(0);
    await expectTotalsOf(w, "hooked", 60);
  });

  it("a campaign completed by polling alone (every webhook dropped)", async () => {
    const w = await setup(
      "ended-polls",
      { orderRateLimit: 100_000, asyncCompleteMs: 100 },
      { webhookFaults: { drop: 1_000_000 } },
    );
    metrics = await startMetrics({ config: w.env.config, port: 0 });
    await importRows(w, "polled", 40);
    await w.work(100);
    await rowsEnded(w, "polled", 40);
    expect(await lookups(w)).toBeGreaterThanOrEqual(40);
    await expectTotalsOf(w, "polled", 40);
  });

  it("webhooks and polls racing for the same orders count each once", async () => {
    const w = await setup("ended-race", { orderRateLimit: 100_000, asyncCompleteMs: 100 });
    metrics = await startMetrics({ config: w.env.config, port: 0 });
    await importRows(w, "race", 80);
    await w.work(100);
    await rowsEnded(w, "race", 80);
    await expectTotalsOf(w, "race", 80);
    // A cancel after the end moves nothing and counts nothing; one before counts its orders.
    await cancelCampaign(w.env.ledger, "race");
    expect((await ordersTotal(metrics)).cancelled).toBe(0);
  });
});
