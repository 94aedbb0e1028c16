import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resumeCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { ProductOverrides } from "../../src/catalog/product-overrides.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { LedgerOrder } from "../../src/ledger/ledger.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
import { depsOf } from "../helpers/campaign-env.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { stats } from "../helpers/sandbox.js";
import { eventually } from "../helpers/wait-for.js";
import {
  importRows,
  messagesCounted,
  pushOrderable,
  rowsEnded,
  useWebhookEnv,
  type WebhookEnv,
} from "../helpers/webhook-env.js";

describe("a campaign with webhooks", () => {
  const { setup } = useWebhookEnv();

  it("completes 300 async rows from webhooks alone (duplicates, out of order, some FAILED): no GET /v2/order", async () => {
    const w = await setup(
      "wh-campaign",
      { orderRateLimit: 100_000, asyncFailRate: 0.05 },
      { webhookFaults: { duplicates: 0.2, outOfOrder: 0.2, drop: 0, delayMs: 0 } },
    );
    await importRows(w, "spring", 300);
    await w.work(60_000);
    await rowsEnded(w, "spring", 300);
    const status = await campaignStatus(w.env.ledger, "spring");
    expect(status.failed_final).toBeGreaterThan(0);
    expect(status.completed + status.failed_final).toBe(300);
    expect(status.submitted).toBe(0);
    const seen = await stats(w.env.sandbox);
    expect(seen.order_lookups).toBe(0);
    expect(seen.webhooks!.duplicated).toBeGreaterThan(0);
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
    const w = await setup("wh-early", { orderRateLimit: 100_000, asyncCompleteMs: 0 });
    await importRows(w, "quick", 60);
    await w.work(60_000);
    await rowsEnded(w, "quick", 60);
    expect((await campaignStatus(w.env.ledger, "quick")).completed).toBe(60);
    // The service is often faster than the worker here: a message that comes before
    // `submitted` is answered 409 and sent again (whether it happens is a race; the receiver's
    // test makes it happen), and no order needed a poll.
    expect((await stats(w.env.sandbox)).order_lookups).toBe(0);
  });

  it("webhooks dropped: the polling net completes the campaign", async () => {
    const w = await setup(
      "wh-dropped",
      { orderRateLimit: 100_000 },
      { webhookFaults: { drop: 1_000_000 } },
    );
    await importRows(w, "dropped", 100);
    await w.work(200);
    await rowsEnded(w, "dropped", 100);
    expect((await campaignStatus(w.env.ledger, "dropped")).completed).toBe(100);
    const seen = await stats(w.env.sandbox);
    expect(seen.webhooks!.dropped).toBe(100);
    expect(seen.order_lookups).toBeGreaterThanOrEqual(100);
    // The follower forgets the ids of the orders it ended.
    expect(await new OrderIndex(w.env.redis, w.env.config.prefix).size()).toBe(0);
  });

  it("webhooks and polls racing end each order once", async () => {
    const w = await setup("wh-race", { orderRateLimit: 100_000, asyncCompleteMs: 100 });
    await importRows(w, "race", 100);
    await w.work(100);
    await rowsEnded(w, "race", 100);
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
  const { setup } = useWebhookEnv();

  /** The product made orderable or not, and the pushed state in the env's Redis. */
  async function setOrderable(w: WebhookEnv, code: string, orderable: boolean): Promise<void> {
    const overrides = new ProductOverrides(w.env.redis, w.env.config.prefix);
    await pushOrderable(w.env.sandbox, overrides, code, orderable);
  }

  it("pauses the campaign with the reason instead of failing its rows, and resumes when the product is back", async () => {
    const w = await setup("wh-product-pause", { orderRateLimit: 100_000 });
    const e = w.env;
    const file = join(e.dataDir, "one-product.csv");
    await writeLargeCsv(e.index, file, 20, { products: 1 });
    const code = (await readFile(file, "utf8")).split("\n")[1]!.split(",")[1]!;
    await importCampaign(
      { file, campaign: "gone", executionMode: "async", confirm: async () => true },
      depsOf(e),
    );
    await setOrderable(w, code, false);
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
    expect((await stats(w.env.sandbox)).requests["POST /v2/order"]).toBeUndefined();

    await setOrderable(w, code, true);
    await new Promise((r) => setTimeout(r, 1100)); // the guard reads the overrides once a second
    await resumeCampaign(e.ledger, "gone");
    await eventually(
      async () => (await campaignStatus(e.ledger, "gone")).completed === 20,
      "20 completed after resume",
    );
  });
});
