import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resumeCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { ProductOverrides } from "../../src/catalog/product-overrides.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { LedgerOrder } from "../../src/ledger/ledger.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
import { depsOf } from "../helpers/campaign-env.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { eventually } from "../helpers/wait-for.js";
import {
  messagesCounted,
  pushOrderable,
  type WebhookEnv,
  webhookEnv,
} from "../helpers/webhook-env.js";

interface LookupStats {
  order_lookups: number;
  webhooks: { messages: number; delivered: number; dropped: number; duplicated: number };
}

async function sandboxStats(w: WebhookEnv): Promise<LookupStats> {
  return (await (await fetch(`${w.env.sandbox.url}/_sandbox/stats`)).json()) as LookupStats;
}

/** Imports `rows` async rows (one per order) into `campaign`, running. */
async function importRows(w: WebhookEnv, campaign: string, rows: number): Promise<void> {
  const file = join(w.env.dataDir, `${campaign}.csv`);
  await writeLargeCsv(w.env.index, file, rows);
  const result = await importCampaign(
    { file, campaign, executionMode: "async", confirm: async () => true },
    depsOf(w.env),
  );
  expect(result.orders).toBe(rows);
}

async function ended(w: WebhookEnv, campaign: string, rows: number): Promise<void> {
  await eventually(
    async () => {
      const s = await campaignStatus(w.env.ledger, campaign);
      return s.completed + s.failed_final === rows;
    },
    `${rows} rows ended`,
    90_000,
  );
}

describe("a campaign with webhooks", () => {
  let w: WebhookEnv | undefined;
  afterEach(async () => {
    await w?.dispose();
    w = undefined;
  });

  it("completes 300 async rows from webhooks alone (duplicates, out of order, some FAILED): no GET /v2/order", async () => {
    w = await webhookEnv(
      "wh-campaign",
      { orderRateLimit: 100_000, asyncFailRate: 0.05 },
      { webhookFaults: { duplicates: 0.2, outOfOrder: 0.2, drop: 0, delayMs: 0 } },
    );
    await importRows(w, "spring", 300);
    await w.work(60_000);
    await ended(w, "spring", 300);
    const status = await campaignStatus(w.env.ledger, "spring");
    expect(status.failed_final).toBeGreaterThan(0);
    expect(status.completed + status.failed_final).toBe(300);
    expect(status.submitted).toBe(0);
    const stats = await sandboxStats(w);
    expect(stats.order_lookups).toBe(0);
    expect(stats.webhooks.duplicated).toBeGreaterThan(0);
    expect(await w.env.ledger.follows.count()).toBe(0);
    expect(await new OrderIndex(w.env.redis, w.env.config.prefix).size()).toBe(0);
    const applied = await messagesCounted(w.registry, "order.completion", "applied");
    expect(applied).toBe(300);
    expect(await messagesCounted(w.registry, "order.completion", "duplicate")).toBeGreaterThan(0);
    // Every failed row says why, as a poll's FAILED would.
    const failed = (await ordersOf(w, "spring")).filter((o) => o.status === "failed_final");
    expect(failed.length).toBe(status.failed_final);
    expect(failed[0]).toMatchObject({ error_type: "order_failed" });
  });

  it("orders the service ends at once (webhooks racing the worker's `submitted`) all end, with no poll", async () => {
    w = await webhookEnv("wh-early", { orderRateLimit: 100_000, asyncCompleteMs: 0 });
    await importRows(w, "quick", 60);
    await w.work(60_000);
    await ended(w, "quick", 60);
    expect((await campaignStatus(w.env.ledger, "quick")).completed).toBe(60);
    // The service is often faster than the worker here: a message that comes before
    // `submitted` is answered 409 and sent again (whether it happens is a race; the receiver's
    // test makes it happen), and no order needed a poll.
    expect((await sandboxStats(w)).order_lookups).toBe(0);
  });

  it("webhooks dropped: the polling net completes the campaign", async () => {
    w = await webhookEnv(
      "wh-dropped",
      { orderRateLimit: 100_000 },
      { webhookFaults: { drop: 1_000_000 } },
    );
    await importRows(w, "dropped", 100);
    await w.work(200);
    await ended(w, "dropped", 100);
    expect((await campaignStatus(w.env.ledger, "dropped")).completed).toBe(100);
    const stats = await sandboxStats(w);
    expect(stats.webhooks.dropped).toBe(100);
    expect(stats.order_lookups).toBeGreaterThanOrEqual(100);
    // The follower forgets the ids of the orders it ended.
    expect(await new OrderIndex(w.env.redis, w.env.config.prefix).size()).toBe(0);
  });

  it("webhooks and polls racing end each order once", async () => {
    w = await webhookEnv("wh-race", { orderRateLimit: 100_000, asyncCompleteMs: 100 });
    await importRows(w, "race", 100);
    await w.work(100);
    await ended(w, "race", 100);
    const status = await campaignStatus(w.env.ledger, "race");
    expect(status).toMatchObject({ completed: 100, submitted: 0, failed_uncertain: 0 });
    const orders = await ordersOf(w, "race");
    expect(orders.map((o) => o.status)).toEqual(Array(100).fill("completed"));
  });
});

/** The campaign's orders as the ledger holds them. */
async function ordersOf(w: WebhookEnv, campaign: string): Promise<LedgerOrder[]> {
  const orders: LedgerOrder[] = [];
  for await (const [, order] of w.env.ledger.orders.all(campaign)) orders.push(order);
  return orders;
}

describe("product.update and a running campaign", () => {
  let w: WebhookEnv | undefined;
  afterEach(async () => {
    await w?.dispose();
    w = undefined;
  });

  /** The product made orderable or not, and the pushed state in the env's Redis. */
  async function setOrderable(code: string, orderable: boolean): Promise<void> {
    const overrides = new ProductOverrides(w!.env.redis, w!.env.config.prefix);
    await pushOrderable(w!.env.sandbox, overrides, code, orderable);
  }

  it("pauses the campaign with the reason instead of failing its rows, and resumes when the product is back", async () => {
    w = await webhookEnv("wh-product-pause", { orderRateLimit: 100_000 });
    const e = w.env;
    const file = join(e.dataDir, "one-product.csv");
    await writeLargeCsv(e.index, file, 20, { products: 1 });
    const code = (await readFile(file, "utf8")).split("\n")[1]!.split(",")[1]!;
    await importCampaign(
      { file, campaign: "gone", executionMode: "async", confirm: async () => true },
      depsOf(e),
    );
    await setOrderable(code, false);
    await w.work(60_000);
    await eventually(
      async () => (await campaignStatus(e.ledger, "gone")).state === "paused",
      "the campaign paused",
    );
    const paused = await campaignStatus(e.ledger, "gone");
    expect(await e.ledger.campaigns.pausedReason("gone")).toMatch(
      new RegExp(`product_unavailable: product ${code} is not orderable \\(product\\.update of `),
    );
    expect(paused).toMatchObject({ failed_final: 0, completed: 0 });
    const posts = (await sandboxStats(w)) as unknown as { requests: Record<string, unknown> };
    expect(posts.requests["POST /v2/order"]).toBeUndefined();

    await setOrderable(code, true);
    await new Promise((r) => setTimeout(r, 1100)); // the guard reads the overrides once a second
    await resumeCampaign(e.ledger, "gone");
    await eventually(
      async () => (await campaignStatus(e.ledger, "gone")).completed === 20,
      "20 completed after resume",
    );
  });
});
