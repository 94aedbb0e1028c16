import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CatalogFilters } from "../../src/catalog/catalog-filters.js";
import { loadCurrentIndex, openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import type { Product } from "../../src/sandbox/index.js";
import { leftoverTmpDirs, useCatalogFixture } from "../helpers/catalog-fixture.js";

const fx = useCatalogFixture();

function expected(products: Product[], filters: CatalogFilters): Product[] {
  return products.filter(
    (p) =>
      (!filters.orderableOnly || p.is_orderable) &&
      (!filters.countries?.length ||
        p.countries_redeemable_in.some((c) => filters.countries?.includes(c))) &&
      (!filters.categories?.length || p.categories.some((c) => filters.categories?.includes(c))),
  );
}

const FILTERS: [string, CatalogFilters][] = [
  ["no filter", {}],
  ["orderable only", { orderableOnly: true }],
  ["two countries", { countries: ["GB", "JP"] }],
  ["one category", { categories: ["travel"] }],
  ["all filters", { orderableOnly: true, countries: ["US", "DE"], categories: ["entertainment"] }],
];

describe("catalog sync", () => {
  it.each(FILTERS)("mirrors 1,200 products exactly as received (%s)", async (_label, filters) => {
    const want = expected(fx.sandbox.state.catalog.products, filters);
    expect(want.length).toBeGreaterThan(0);
    const result = await fx.sync({ filters });
    expect(result.manifest.product_count).toBe(want.length);
    expect(result.manifest.pages).toBe(Math.ceil(want.length / 500));
    expect(result.manifest.filters).toEqual({
      orderable_only: Boolean(filters.orderableOnly),
      countries: [...(filters.countries ?? [])].sort(),
      categories: filters.categories ?? [],
    });

    const text = await readFile(join(result.dir, "products.json"), "utf8");
    expect(JSON.parse(text)).toEqual(want);
    expect(createHash("sha256").update(text).digest("hex")).toBe(result.manifest.sha256);

    const snapshot = await openCurrentSnapshot(fx.dataDir);
    expect(snapshot?.dir).toBe(result.dir);
    let streamed = 0;
    for await (const product of snapshot!.products()) {
      expect(product.code).toBe(want[streamed]?.code);
      streamed += 1;
    }
    expect(streamed).toBe(want.length);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });

  it("writes a manifest with counts, version and duration", async () => {
    const result = await fx.sync();
    const manifest = JSON.parse(await readFile(join(result.dir, "manifest.json"), "utf8"));
    const products = fx.sandbox.state.catalog.products;
    const byType: Record<string, number> = {};
    const byCurrency: Record<string, number> = {};
    for (const p of products) {
      byType[p.payout_type] = (byType[p.payout_type] ?? 0) + 1;
      byCurrency[p.currency] = (byCurrency[p.currency] ?? 0) + 1;
    }
    expect(manifest.counts).toEqual({ by_payout_type: byType, by_currency: byCurrency });
    expect(manifest.api_version).toBe("2024-02-05");
    expect(manifest.warnings).toEqual([]);
    expect(manifest.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(manifest.fetched_at)).not.toBeNaN();
  });

  it("indexes subscription plans by plan code and gift cards by denominations", async () => {
    await fx.sync();
    const index = await loadCurrentIndex(fx.dataDir);
    const products = fx.sandbox.state.catalog.products;
    const subscription = products.find((p) => p.payout_type === "subscription")!;
    const plan = subscription.subscription!.subscription_plans[0]!;
    expect(index!.entries[plan.subscription_plan_code]).toMatchObject({
      plan_of: subscription.code,
      denominations: { type: "fixed", list: [plan.price] },
      currency: subscription.currency,
    });
    expect(index!.entries[subscription.code]).toBeUndefined();
    const open = products.find((p) => p.gift_card?.denominations.type === "open")!;
    expect(index!.entries[open.code]!.denominations).toEqual({
      type: "open",
      min: open.gift_card!.denominations.minimum_value,
      max: open.gift_card!.denominations.maximum_value,
    });
    const fixed = products.find((p) => p.gift_card?.denominations.type === "fixed")!;
    expect(index!.entries[fixed.code]!.denominations).toEqual({
      type: "fixed",
      list: fixed.gift_card!.denominations.available_list,
    });
    const payment = products.find((p) => p.payout_type === "payment")!;
    expect(index!.entries[payment.code]!.denominations).toEqual({
      type: "open",
      min: payment.payment!.denominations.minimum_value,
      max: payment.payment!.denominations.maximum_value,
    });
  });

  it("keeps the newest snapshots only", async () => {
    for (let i = 0; i < 4; i++) {
      await fx.sync({ keep: 2 });
    }
    const { readdir } = await import("node:fs/promises");
    const names = await readdir(join(fx.dataDir, "catalog", "snapshots"));
    expect(names).toHaveLength(2);
    const current = await openCurrentSnapshot(fx.dataDir);
    expect(names).toContain(current!.name);
  });

  it("reports no snapshot before the first sync", async () => {
    expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();
    expect(await loadCurrentIndex(fx.dataDir)).toBeUndefined();
  });
});
