// The product guard a worker asks before each order (webhooks on): what product.update recorded
// in Redis pauses a campaign about to send an order the service would refuse.
import { describe, expect, it } from "vitest";
import type { OrderRequest } from "../../src/api/order-request.js";
import type { ProductUpdate } from "../../src/api/schemas.js";
import { fileCatalogStore } from "../../src/catalog/file-store.js";
import { ProductOverrides } from "../../src/catalog/product-overrides.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { holdIfProductStopped, ProductGuard } from "../../src/webhooks/product-guard.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const redis = useRedisPrefix("wh-guard");

function request(code: string, face: number): OrderRequest {
  return {
    payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
    items: [
      {
        face_value: face,
        distribution_method: { type: "EMAIL", email_address: "a@example.com" },
        products: { type: "SINGLE", value: code },
      },
    ],
  };
}

function update(code: string, state: ProductUpdate["new_state"], at = new Date()): ProductUpdate {
  return {
    product_code: code,
    old_state: { price_multiplier: "0.05", is_orderable: true },
    new_state: state,
    timestamp: at.toISOString(),
  };
}

/** A guard over the prefix's overrides, reading them again at every call. */
async function guardOf(): Promise<{ guard: ProductGuard; overrides: ProductOverrides }> {
  const overrides = new ProductOverrides(redis.redis, redis.prefix);
  // No snapshot in this data dir: every override counts.
  const guard = new ProductGuard(
    { overrides, catalog: fileCatalogStore(await tmpDir("wh-guard")) },
    -1,
  );
  return { guard, overrides };
}

describe("the product guard", () => {
  it("stops an order of a product pushed as not orderable, until it is again", async () => {
    const { guard, overrides } = await guardOf();
    expect(await guard.stopReason(request("GC-1", 10))).toBeUndefined();
    const at = new Date();
    await overrides.record(update("GC-1", { price_multiplier: "0.05", is_orderable: false }, at));
    expect(await guard.stopReason(request("GC-1", 10))).toBe(
      `product_unavailable: product GC-1 is not orderable (product.update of ${at.toISOString()})` +
        "; resume the campaign when it is orderable again",
    );
    expect(await guard.stopReason(request("GC-2", 10))).toBeUndefined();
    const later = new Date(at.getTime() + 1000);
    await overrides.record(update("GC-1", { price_multiplier: "0.05", is_orderable: true }, later));
    expect(await guard.stopReason(request("GC-1", 10))).toBeUndefined();
  });

  it("stops an order whose face value the pushed denominations no longer take", async () => {
    const { guard, overrides } = await guardOf();
    const denominations = { type: "fixed", available_list: ["25.00", "50.00"] };
    await overrides.record(
      update("GC-1", { price_multiplier: "0.05", is_orderable: true, denominations }),
    );
    expect(await guard.stopReason(request("GC-1", 25))).toBeUndefined();
    expect(await guard.stopReason(request("GC-1", 30))).toMatch(
      new RegExp(
        "^product_unavailable: product GC-1 no longer takes face value 30 " +
          "\\(its denominations: 25\\.00, 50\\.00\\) \\(product\\.update of ",
      ),
    );
    const open = { type: "open", minimum_value: "5.00", maximum_value: "20.50" };
    await overrides.record(
      update(
        "GC-1",
        { price_multiplier: "0.05", is_orderable: true, denominations: open },
        new Date(Date.now() + 1000),
      ),
    );
    expect(await guard.stopReason(request("GC-1", 20.5))).toBeUndefined();
    expect(await guard.stopReason(request("GC-1", 20.51))).toMatch(/5\.00\.\.20\.50/);
  });

  it("pauses the campaign and puts the order back on its pending list, unsent", async () => {
    const { guard, overrides } = await guardOf();
    const ledger = new Ledger(redis.redis, redis.prefix);
    await ledger.orders.record("c", [
      { order: { ...ledgerOrder("c", ["a"]), status: "in_flight" }, rows: [["a", ledgerRow(2)]] },
    ]);
    await overrides.record(update("GC-1", { price_multiplier: "0.05", is_orderable: false }));
    const paused: string[] = [];
    const order = { campaign: "c", number: 1, request: request("GC-1", 10), log: silentLogger };
    expect(
      await holdIfProductStopped(order, { guard, ledger, onPaused: (c) => paused.push(c) }),
    ).toBe(true);
    expect(paused).toEqual(["c"]);
    expect(await ledger.campaigns.pausedReason("c")).toMatch(
      /^product_unavailable: product GC-1 is not/,
    );
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "queued" });
    expect(await redis.redis.lrange(ledger.keys("c").pending, 0, -1)).toEqual(["1"]);
  });

  it("reads once for the orders that ask together; an old view stops nothing without a new read", async () => {
    const overrides = new ProductOverrides(redis.redis, redis.prefix);
    let reads = 0;
    const counted = {
      record: (u: ProductUpdate) => overrides.record(u),
      read: () => {
        reads += 1;
        return overrides.read();
      },
      applyTo: overrides.applyTo.bind(overrides),
    };
    const guard = new ProductGuard(
      { overrides: counted, catalog: fileCatalogStore(await tmpDir("wh-guard")) },
      50,
    );
    const at = new Date();
    await overrides.record(update("GC-1", { price_multiplier: "0.05", is_orderable: false }, at));
    const asked = await Promise.all(
      Array.from({ length: 20 }, () => guard.stopReason(request("GC-1", 10))),
    );
    expect(asked.every((reason) => reason?.startsWith("product_unavailable: product GC-1"))).toBe(
      true,
    );
    expect(reads).toBe(1);
    // Orderable again, and the view gone old: the old view would stop the order, so it waits
    // for the next read, one for all of them.
    const later = new Date(at.getTime() + 1000);
    await overrides.record(update("GC-1", { price_multiplier: "0.05", is_orderable: true }, later));
    await new Promise((r) => setTimeout(r, 60)); // past the guard's 50 ms: its view is old
    const again = await Promise.all(
      Array.from({ length: 20 }, () => guard.stopReason(request("GC-1", 10))),
    );
    expect(again.every((reason) => reason === undefined)).toBe(true);
    expect(reads).toBe(2);
  });
});
