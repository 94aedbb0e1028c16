import { describe, expect, it } from "vitest";
import type { RawProduct } from "../../src/api/schemas.js";
import {
  compactRecordOf,
  DIFF_FIELDS,
  recordOfText,
  serialiseProduct,
} from "../../src/catalog/compact-record.js";
import { catalogProductProblems } from "../../src/catalog/product-check.js";
import { generateCatalog } from "../../src/sandbox/index.js";

const serialise = (product: RawProduct) =>
  serialiseProduct(product, catalogProductProblems(product));

const diffed = (record: Record<string, unknown>) =>
  Object.fromEntries(DIFF_FIELDS.map((field) => [field, record[field]]));

describe("serialiseProduct's record text", () => {
  const products = generateCatalog({ products: 1200, seed: 9 }) as unknown as RawProduct[];
  const plain = products.find((p) => p.payout_type === "gift_card")!;

  it("parses to the compact record's values for every diffed field, whatever the product", () => {
    for (const product of products) {
      const record = recordOfText(serialise(product).record);
      expect(record.code).toBe(product.code);
      expect(diffed(record)).toEqual(diffed(compactRecordOf(product)));
    }
  });

  it("is a plain product's index entry text, with no records.ndjson line of its own", () => {
    const { indexed, record, ownLine } = serialise(plain);
    expect(indexed).toHaveLength(1);
    expect(record).toBe(indexed[0]!.text);
    expect(ownLine).toBe(false);
  });

  it("is the compact record, on a line of its own, for every other product", () => {
    const others = [
      products.find((p) => p.payout_type === "subscription")!,
      { ...plain, is_orderable: "yes" },
      { ...plain, discount_multiplier: undefined },
      { ...plain, availability: 42 },
    ] as unknown as RawProduct[];
    for (const product of others) {
      const { record, ownLine } = serialise(product);
      expect(record).toBe(JSON.stringify(compactRecordOf(product)));
      expect(ownLine).toBe(true);
    }
  });

  it("reads the records lines of the previous version (entry text plus two fields)", () => {
    const { indexed } = serialise(plain);
    const { availability: _, ...entry } = indexed[0]!.entry;
    const line = `${JSON.stringify(entry).slice(0, -1)},"availability":${JSON.stringify(plain.availability)},"countries_redeemable_in":${JSON.stringify(entry.countries)}}`;
    expect(diffed(recordOfText(line))).toEqual(diffed(compactRecordOf(plain)));
  });
});
