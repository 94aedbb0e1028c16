import { describe, expect, it } from "vitest";
import type { RawProduct } from "../../src/api/schemas.js";
import {
  compactRecordOf,
  DIFF_FIELDS,
  serialiseProduct,
} from "../../src/catalog/compact-record.js";
import { indexEntriesOf } from "../../src/catalog/index-entries.js";
import { catalogProductProblems } from "../../src/catalog/product-check.js";
import { generateCatalog } from "../../src/sandbox/index.js";

function lineOf(product: RawProduct): string {
  return serialiseProduct(product, catalogProductProblems(product)).line;
}

const diffed = (record: Record<string, unknown>) =>
  Object.fromEntries(DIFF_FIELDS.map((field) => [field, record[field]]));

describe("serialiseProduct's records line", () => {
  const products = generateCatalog({ products: 1200, seed: 9 }) as unknown as RawProduct[];

  it("holds the compact record's values for every diffed field, whatever the product", () => {
    for (const product of products) {
      const line = JSON.parse(lineOf(product)) as Record<string, unknown>;
      expect(line.code).toBe(product.code);
      expect(diffed(line)).toEqual(diffed(compactRecordOf(product)));
    }
  });

  it("reuses the index entry's text for a plain product, and not for the others", () => {
    const plain = products.find((p) => p.payout_type === "gift_card")!;
    const [entry] = indexEntriesOf(plain);
    expect(lineOf(plain).startsWith(JSON.stringify(entry).slice(0, -1))).toBe(true);

    const subscription = products.find((p) => p.payout_type === "subscription")!;
    expect(lineOf(subscription)).toBe(JSON.stringify(compactRecordOf(subscription)));
    const broken = { ...plain, is_orderable: "yes" } as unknown as RawProduct;
    expect(lineOf(broken)).toBe(JSON.stringify(compactRecordOf(broken)));
    const noMultiplier = { ...plain, discount_multiplier: undefined } as unknown as RawProduct;
    expect(lineOf(noMultiplier)).toBe(JSON.stringify(compactRecordOf(noMultiplier)));
  });
});
