import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { useCatalogFixture } from "../helpers/catalog-fixture.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture({ products: 40 });

describe("products the sync does not fully understand", () => {
  it("keeps malformed products and lists them as warnings; keeps unknown payout types", async () => {
    const products = fx.sandbox.state.catalog.products.map((p) => ({ ...p }));
    const [badCurrency, noName] = [products[1]!, products[2]!];
    (badCurrency as Record<string, unknown>).currency = "dollars";
    delete (noName as Record<string, unknown>).name;
    const crypto = {
      ...products[5]!,
      code: "ZZZ-CRYPTO-1",
      payout_type: "crypto_voucher",
      crypto_voucher: { network: "btc", denominations: { minimum_value: "1", maximum_value: "9" } },
      brand_new_field: { nested: [1, 2, 3] },
    };
    delete (crypto as Record<string, unknown>).gift_card;
    await control(fx.sandbox, "/_sandbox/catalog", { catalog: [...products, crypto] });

    const result = await fx.sync();
    expect(result.manifest.product_count).toBe(41);
    const kept = JSON.parse(await readFile(join(result.dir, "products.json"), "utf8"));
    expect(kept.find((p: { code: string }) => p.code === crypto.code)).toEqual(crypto);
    expect(kept.find((p: { code: string }) => p.code === badCurrency.code).currency).toBe(
      "dollars",
    );

    const manifest = JSON.parse(await readFile(join(result.dir, "manifest.json"), "utf8"));
    expect(manifest.warnings).toEqual([
      { code: badCurrency.code, problems: [expect.stringMatching(/^currency: /)] },
      { code: noName.code, problems: [expect.stringMatching(/^name: /)] },
    ]);
    expect(manifest.counts.by_payout_type.crypto_voucher).toBe(1);

    const index = await loadCurrentIndex(fx.dataDir);
    expect(index!.entries[crypto.code]).toMatchObject({
      payout_type: "crypto_voucher",
      denominations: null,
    });
    expect(index!.entries[badCurrency.code]).toMatchObject({
      denominations: null,
      problems: [expect.stringMatching(/^currency: /)],
    });
  });
});
