import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { enqueueOrders } from "../../../jobs/orders/enqueue.js";
import { resumeCampaign } from "../../../src/campaigns/control.js";
import { retryCampaign } from "../../../src/campaigns/retry.js";
import { campaignStatus } from "../../../src/campaigns/status.js";
import { importCampaign } from "../../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../../src/import/sample-csv.js";
import { orderKey } from "../../../src/orders/keys.js";
import { requestFromLedger } from "../../../src/orders/request.js";
import { fileStores } from "../../../src/stores/file-stores.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS } from "../../helpers/campaign-env.js";
import { control, sandboxOrders } from "../../helpers/sandbox.js";
import { useCampaignEnv } from "../../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../../helpers/wait-for.js";

// The repair pass runs often: a retry under the same key waits for it (see Dispatcher.repair).
const FAST = { ...FAST_TIMINGS, dispatchRepairMs: 300, rateLimitBaseMs: 300 };
const QUICK_JOBS = {
  attempts: 3,
  backoff: { type: "fixed", delay: 50 },
  removeOnComplete: false,
  removeOnFail: false,
};

describe("order outcomes", () => {
  const envs = useCampaignEnv();
  let env: CampaignEnv;

  async function importRows(
    rows: number,
    options: Partial<Parameters<typeof importCampaign>[0]> = {},
  ) {
    const file = join(env.dataDir, `orders-${Math.random().toString(36).slice(2)}.csv`);
    await writeFile(file, sampleCsv(env.index, { rows, products: 2 }));
    return importCampaign({ file, campaign: "c", jobOptions: QUICK_JOBS, ...options }, depsOf(env));
  }

  async function work(concurrency = 4) {
    await envs.work(env, { concurrency, timings: FAST });
  }

  const status = () => campaignStatus(env.ledger, "c");

  it("200 COMPLETED (sync): rows completed with order and item ids", async () => {
    env = await envs.setup("sync");
    await importRows(3, { executionMode: "sync" });
    await work();
    await eventually(async () => (await status()).completed === 3, "3 completed");
    const [, order] = (await first(env.ledger.orders.all("c")))!;
    const key = order.key;
    expect(order).toMatchObject({ status: "completed" });
    expect(order.order_id).toMatch(/^O-/);
    expect(order.item_ids?.[0]).toMatch(/^E-/);
    expect(order.payout_urls).toBeUndefined();
    expect((await sandboxOrders(env.sandbox)).find((o) => o.idempotency_key === key)?.id).toBe(
      order.order_id,
    );
  });

  it("202 PROCESSING: rows submitted, then followed to COMPLETED", async () => {
    env = await envs.setup("async", { asyncCompleteMs: 600 });
    await importRows(2);
    await work();
    await eventually(async () => (await status()).submitted === 2, "2 submitted");
    await eventually(async () => (await status()).completed === 2, "2 completed");
    expect(await status()).toMatchObject({
      total: 2,
      completed: 2,
      submitted: 0,
      queued: 0,
      in_flight: 0,
    });
  });

  it("5xx: retried with the SAME key until it goes through; one order", async () => {
    env = await envs.setup("5xx", { failRate: 1 });
    await importRows(1, { jobOptions: { ...QUICK_JOBS, attempts: 50 } });
    await work(1);
    await eventually(async () => {
      const stats = (await (await fetch(`${env.sandbox.url}/_sandbox/stats`)).json()) as {
        requests: Record<string, Record<string, number>>;
      };
      return (stats.requests["POST /v2/order"]?.["500"] ?? 0) >= 3;
    }, "three 500s");
    const [, order] = (await first(env.ledger.orders.all("c")))!;
    expect(["queued", "in_flight"]).toContain(order.status);
    env.sandbox.setFaults({ failRate: 0 });
    await eventually(async () => (await status()).completed === 1, "completed");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
  });

  it("5xx until attempts run out: failed_uncertain; retry re-sends under the same key", async () => {
    env = await envs.setup("uncertain", { failRate: 1 });
    await importRows(1, { jobOptions: { ...QUICK_JOBS, attempts: 2 } });
    await work(1);
    await eventually(async () => (await status()).failed_uncertain === 1, "failed_uncertain");
    const [, order] = (await first(env.ledger.orders.all("c")))!;
    const key = order.key;
    expect(order).toMatchObject({
      status: "failed_uncertain",
      error_type: "internal_server_error",
    });
    env.sandbox.setFaults({ failRate: 0 });
    const retried = await retryCampaign(env.ledger, "c", {});
    expect(retried).toMatchObject({ orders: 1, rows: 1, mode: "same-key" });
    await eventually(async () => (await status()).completed === 1, "completed after retry");
    const orders = await sandboxOrders(env.sandbox);
    expect(orders.map((o) => o.idempotency_key)).toEqual([key]);
  });

  it("dropped connection after the order was made: same key again, still one order", async () => {
    env = await envs.setup("drop", { dropRate: 1 });
    await importRows(1, { jobOptions: { ...QUICK_JOBS, attempts: 20 } });
    await work(1);
    await eventually(async () => (await sandboxOrders(env.sandbox)).length === 1, "the order made");
    env.sandbox.setFaults({ dropRate: 0 });
    await eventually(async () => (await status()).completed === 1, "completed");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
  });

  it("429: the job waits without losing an attempt; rows stay queued", async () => {
    env = await envs.setup("429", { orderRateLimit: 2 });
    await importRows(4, { jobOptions: { ...QUICK_JOBS, attempts: 1 } });
    await work(2);
    await eventually(async () => (await status()).completed === 2, "2 completed within the limit");
    const stats = (await (await fetch(`${env.sandbox.url}/_sandbox/stats`)).json()) as {
      requests: Record<string, Record<string, number>>;
    };
    expect(stats.requests["POST /v2/order"]?.["429"] ?? 0).toBeGreaterThan(0);
    expect(await status()).toMatchObject({ completed: 2, failed_uncertain: 0, failed_final: 0 });
    env.sandbox.setFaults({ orderRateLimit: 1000 });
    // attempts: 1 — had a 429 used an attempt, these rows would have failed.
    await eventually(
      async () => (await status()).completed === 4,
      "all completed once the limit allows",
    );
    expect(await sandboxOrders(env.sandbox)).toHaveLength(4);
  });

  it("insufficient_funds: campaign paused, rows stay queued; resume finishes it", async () => {
    env = await envs.setup("funds", {
      balances: { USD: "0.00", EUR: "0.00", GBP: "0.00", CAD: "0.00", JPY: "0" },
    });
    await importRows(3, { balanceCheck: false });
    await work();
    // Paused by the first refusal; the other rows' attempts in flight then end queued too.
    await eventually(async () => {
      const s = await status();
      return s.paused !== null && s.queued === 3;
    }, "paused with every row queued");
    const paused = await status();
    expect(paused.paused?.reason).toMatch(/^insufficient_funds/);
    expect(paused).toMatchObject({ queued: 3, completed: 0, failed_final: 0, failed_uncertain: 0 });
    await control(env.sandbox, "/_sandbox/balances", {
      USD: "1000000.00",
      EUR: "1000000.00",
      GBP: "1000000.00",
      CAD: "1000000.00",
      JPY: "100000000",
    });
    await resumeCampaign(env.ledger, "c");
    await eventually(async () => (await status()).completed === 3, "completed after resume");
    expect((await status()).paused).toBeNull();
    // The refused keys were never paid; each row was paid once: under its next generation's
    // key if it was refused, under its first key if the pause gave its job back unsent.
    const keys = (await sandboxOrders(env.sandbox)).map((o) => o.idempotency_key);
    expect(keys).toHaveLength(3);
    let refused = 0;
    for await (const [, order] of env.ledger.orders.all("c")) {
      if (order.status === "completed") expect(keys).toContain(order.key);
      else {
        refused += 1;
        expect([order.status, keys.includes(order.key)]).toEqual(["superseded", false]);
      }
    }
    expect(refused).toBeGreaterThan(0);
  });

  it("other 4xx: failed_final, nothing made; retry --new-key pays under the next generation", async () => {
    env = await envs.setup("final");
    const [product] = pickSampleProducts(env.index, 1);
    await control(env.sandbox, "/_sandbox/catalog", {
      mutate: { update: [{ code: product!.code, is_orderable: false }] },
    });
    await importRows(2);
    await work();
    // Both rows settled before the product comes back (one on it refused, the other paid): the
    // other one paid after madeBefore is counted would make the count below one more.
    await eventually(async () => {
      const s = await status();
      return s.failed_final > 0 && s.failed_final + s.completed === 2;
    }, "both rows settled, one failed_final");
    const failed = [];
    for await (const [, order] of env.ledger.orders.all("c"))
      if (order.status === "failed_final") failed.push([order.key, order] as const);
    expect(failed[0]![1]).toMatchObject({ error_type: "product_validation_error" });
    const madeBefore = (await sandboxOrders(env.sandbox)).length;
    await control(env.sandbox, "/_sandbox/catalog", {
      mutate: { update: [{ code: product!.code, is_orderable: true }] },
    });
    const retried = await retryCampaign(env.ledger, "c", {
      newKey: true,
      stores: fileStores(env.dataDir),
    });
    expect(retried.mode).toBe("new-key");
    await eventually(
      async () => (await status()).completed === 2,
      "completed after retry --new-key",
    );
    const keys = (await sandboxOrders(env.sandbox)).map((o) => o.idempotency_key);
    expect(keys).toHaveLength(madeBefore + retried.orders);
    expect(keys).not.toContain(failed[0]![0]);
    const [row] = await env.ledger.orders.getRows("c", failed[0]![1].identities);
    expect(row?.generation).toBe(1);
  });

  it("a 422 naming one item of several: that row fails, the others go under the next generation", async () => {
    env = await envs.setup("split");
    const product = pickSampleProducts(env.index, 1)[0]!;
    const face =
      product.denominations?.type === "fixed"
        ? product.denominations.list[0]!
        : (product.denominations as { min: string }).min;
    const identities = ["id-a", "id-b", "id-c"];
    const emails = ["a@example.com", "not an email", "c@example.com"];
    const key = orderKey("c", 0, identities);
    await env.ledger.campaigns.register("c", { execution_mode: "async" });
    await env.ledger.orders.record("c", [
      {
        order: {
          key,
          identities,
          generation: 0,
          status: "queued",
          currency: product.currency,
          metadata: { campaign: "c" },
        },
        rows: identities.map((id, i) => [
          id,
          {
            line: i + 2,
            generation: 0,
            payload_hash: id,
            email: emails[i]!,
            product_code: product.code,
            face_value: face,
            currency: product.currency,
          },
        ]),
      },
    ]);
    await enqueueOrders(
      env.queue,
      [{ campaign: "c", order: 1, executionMode: "async" }],
      QUICK_JOBS,
    );
    await work();
    await eventually(async () => (await status()).completed === 2, "the two good rows completed");
    expect(await status()).toMatchObject({ total: 3, completed: 2, failed_final: 1 });
    expect(await env.ledger.orders.getOrder("c", 1)).toMatchObject({
      identities: ["id-b"],
      status: "failed_final",
      error_type: "validation_error",
    });
    const next = orderKey("c", 1, ["id-a", "id-c"]);
    expect(await env.ledger.orders.getOrder("c", 2)).toMatchObject({
      key: next,
      status: "completed",
      generation: 1,
      replaces: 1,
    });
    const orders = await sandboxOrders(env.sandbox);
    expect(orders.map((o) => o.idempotency_key)).toEqual([next]);
    expect(orders[0]!.items).toHaveLength(2);
  });

  it("idempotency_validation_error: rows failed_uncertain, never retried", async () => {
    env = await envs.setup("conflict");
    await importRows(1, { jobOptions: { ...QUICK_JOBS, attempts: 5 } });
    const [number, order] = (await first(env.ledger.orders.all("c")))!;
    const key = order.key;
    // Another body already went out under this key (someone else's script, an edited file).
    const rows = await env.ledger.orders.getRows("c", order.identities);
    const request = requestFromLedger(order, rows);
    await env.client.createOrder(
      { ...request, description: "something else" },
      { idempotencyKey: key, executionMode: "sync" },
    );
    await work(1);
    await eventually(async () => (await status()).failed_uncertain === 1, "failed_uncertain");
    expect(await env.ledger.orders.getOrder("c", number)).toMatchObject({
      status: "failed_uncertain",
      error_type: "idempotency_validation_error",
    });
    const refusals = async () => {
      const stats = (await (await fetch(`${env.sandbox.url}/_sandbox/stats`)).json()) as {
        requests: Record<string, Record<string, number>>;
      };
      return stats.requests["POST /v2/order"]?.["400"];
    };
    await holdsFor(async () => (await refusals()) === 1, 400, "one refused request, no retry");
    expect(order.status).toBe("queued");
  });
});

async function first<T>(iterable: AsyncIterable<T>): Promise<T | undefined> {
  for await (const item of iterable) return item;
  return undefined;
}
