import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RawProduct } from "../../src/api/schemas.js";
import type { CatalogDiff } from "../../src/catalog/catalog-diff.js";
import { compactRecordOf, serialiseProduct } from "../../src/catalog/compact-record.js";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { loadPreviousRecords } from "../../src/catalog/previous-records.js";
import { catalogProductProblems } from "../../src/catalog/product-check.js";
import { DIGESTS_HEADER } from "../../src/catalog/record-digest.js";
import type { Product } from "../../src/sandbox/index.js";
import { useCatalogFixture } from "../helpers/catalog-fixture.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture();

describe("the catalog diff", () => {
  it("lists everything as added for the first snapshot", async () => {
    const result = await fx.sync();
    expect(result.diff).toEqual({
      from: null,
      summary: { added: 1200, removed: 0, changed: 0, unchanged: 0 },
    });
  });

  it("reports added, removed and changed codes with old and new values", async () => {
    const first = await fx.sync();
    const products = fx.sandbox.state.catalog.products;
    const [removed, disabled, repriced, moved] = [
      products[3]!,
      products[10]!,
      products[20]!,
      products[30]!,
    ];
    const touched = new Set([removed.code, disabled.code, repriced.code, moved.code]);
    const giftCard = products.find((p) => p.gift_card && !touched.has(p.code))!;
    const added: Product = { ...products[0]!, code: "ZZZ-NEW-00001", name: "Brand new" };
    await control(fx.sandbox, "/_sandbox/catalog", {
      mutate: {
        remove: [removed.code],
        add: [added],
        update: [
          { code: disabled.code, is_orderable: false, state: "TEMPORARILY_DISABLED" },
          { code: repriced.code, discount_multiplier: "0.9999" },
          { code: moved.code, countries_redeemable_in: ["ZZ"], availability: "realtime" },
          {
            code: giftCard.code,
            gift_card: {
              ...giftCard.gift_card!,
              denominations: {
                type: "fixed",
                minimum_value: "1.00",
                maximum_value: "2.00",
                available_list: ["1.00", "2.00"],
              },
            },
          },
        ],
      },
    });
    const second = await fx.sync();
    expect(second.diff.from).toBe(first.snapshot);
    expect(second.diff.summary).toEqual({ added: 1, removed: 1, changed: 4, unchanged: 1195 });

    const diff = JSON.parse(await readFile(join(second.dir, "diff.json"), "utf8")) as CatalogDiff;
    expect(diff).toEqual(await (await openCurrentSnapshot(fx.dataDir))!.diff());
    expect(diff.added).toEqual([{ code: added.code, name: "Brand new" }]);
    expect(diff.removed).toEqual([{ code: removed.code, name: removed.name }]);
    const byCode = Object.fromEntries(diff.changed.map((c) => [c.code, c.fields]));
    expect(byCode[disabled.code]).toEqual({
      is_orderable: { old: disabled.is_orderable, new: false },
      state: { old: disabled.state, new: "TEMPORARILY_DISABLED" },
    });
    expect(byCode[repriced.code]).toEqual({
      discount_multiplier: { old: repriced.discount_multiplier, new: "0.9999" },
    });
    expect(byCode[moved.code]).toEqual({
      availability: { old: moved.availability, new: "realtime" },
      countries_redeemable_in: {
        old: [...moved.countries_redeemable_in].sort(),
        new: ["ZZ"],
      },
    });
    expect(byCode[giftCard.code]).toEqual({
      denominations: {
        old: expect.anything(),
        new: { type: "fixed", list: ["1.00", "2.00"] },
      },
    });
  });

  it("reports nothing when the catalog did not change", async () => {
    await fx.sync();
    const second = await fx.sync();
    expect(second.diff.summary).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1200 });
  });

  it("reports a changed subscription plan price", async () => {
    await fx.sync();
    const sub = fx.sandbox.state.catalog.products.find((p) => p.payout_type === "subscription")!;
    const plans = sub.subscription!.subscription_plans.map((plan, i) =>
      i === 0 ? { ...plan, price: "1234.00" } : plan,
    );
    await control(fx.sandbox, "/_sandbox/catalog", {
      mutate: {
        update: [
          { code: sub.code, subscription: { ...sub.subscription!, subscription_plans: plans } },
        ],
      },
    });
    const second = await fx.sync();
    const diff = (await (await openCurrentSnapshot(fx.dataDir))!.diff())!;
    expect(second.diff.summary.changed).toBe(1);
    expect(diff.changed[0]!.fields.denominations!.new).toEqual({
      type: "plans",
      plans: plans.map((p) => ({ code: p.subscription_plan_code, price: p.price })),
    });
  });

  it("saves one digest per product, and records only for those not plain", async () => {
    const first = await fx.sync();
    const snapshot = (await openCurrentSnapshot(fx.dataDir))!;
    const [header, ...digests] = await readLines(join(first.dir, "digests.txt"));
    expect(header).toBe(DIGESTS_HEADER);
    const products: RawProduct[] = [];
    for await (const product of snapshot.products()) products.push(product);
    expect(digests.map((line) => JSON.parse(line.slice(29)))).toEqual(products.map((p) => p.code));
    // A plain product's record is its index.json entry; the others have a records.ndjson line.
    const records = await readLines(join(first.dir, "records.ndjson"));
    const notPlain = products.filter((p) => serialiseProduct(p, catalogProductProblems(p)).ownLine);
    expect(notPlain.length).toBeGreaterThan(0);
    expect(records.map((line) => JSON.parse(line).code)).toEqual(notPlain.map((p) => p.code));
  });

  // Digests of an earlier version hash texts of another shape: every one would differ.
  it("computes the digests again when digests.txt has no header", async () => {
    const first = await fx.sync();
    const path = join(first.dir, "digests.txt");
    const snapshot = (await openCurrentSnapshot(fx.dataDir))!;
    const saved = (await loadPreviousRecords(snapshot)).digests;
    const stale = (await readLines(path))
      .slice(1)
      .map((line) => `${"A".repeat(28)}${line.slice(28)}`);
    await writeFile(path, `${stale.join("\n")}\n`);
    expect((await loadPreviousRecords(snapshot)).digests).toEqual(saved);
  });

  // Snapshots written before digests.txt existed, or whose file is damaged, are hashed again.
  for (const [what, damage] of [
    ["missing", (path: string) => rm(path)],
    ["not digest lines", (path: string) => writeFile(path, "garbage\n")],
  ] as const) {
    it(`diffs against the records when digests.txt is ${what}`, async () => {
      const first = await fx.sync();
      await damage(join(first.dir, "digests.txt"));
      const product = fx.sandbox.state.catalog.products[7]!;
      await updateProduct(product.code, { state: "TEMPORARILY_DISABLED" });
      const second = await fx.sync();
      expect(second.diff.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1199 });
    });
  }
});

describe("the catalog diff across record shapes", () => {
  it("does not report a reordering of countries", async () => {
    await fx.sync();
    const product = fx.sandbox.state.catalog.products.find(
      (p) => p.countries_redeemable_in.length > 1,
    )!;
    const reversed = [...product.countries_redeemable_in].reverse();
    await updateProduct(product.code, { countries_redeemable_in: reversed });
    const second = await fx.sync();
    expect(second.diff.summary).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1200 });
  });

  // Snapshots of earlier versions hold one compact record per line and no digests.txt.
  it("diffs against a snapshot whose records have the older shape", async () => {
    const first = await fx.sync();
    const snapshot = (await openCurrentSnapshot(fx.dataDir))!;
    const older: string[] = [];
    for await (const product of snapshot.products()) {
      older.push(JSON.stringify(compactRecordOf(product)));
    }
    await writeFile(join(first.dir, "records.ndjson"), `${older.join("\n")}\n`);
    await rm(join(first.dir, "digests.txt"));
    const product = fx.sandbox.state.catalog.products[11]!;
    await updateProduct(product.code, { discount_multiplier: "0.4242" });
    const second = await fx.sync();
    expect(second.diff.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1199 });
    const diff = (await (await openCurrentSnapshot(fx.dataDir))!.diff())!;
    expect(diff.changed).toEqual([
      {
        code: product.code,
        name: product.name,
        fields: {
          discount_multiplier: { old: product.discount_multiplier ?? null, new: "0.4242" },
        },
      },
    ]);
  });
});

/** Changes some fields of one product in the sandbox's catalog. */
async function updateProduct(code: string, fields: Partial<Product>): Promise<void> {
  await control(fx.sandbox, "/_sandbox/catalog", { mutate: { update: [{ code, ...fields }] } });
}

async function readLines(path: string): Promise<string[]> {
  return (await readFile(path, "utf8")).split("\n").filter((line) => line !== "");
}
