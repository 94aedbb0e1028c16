import { describe, expect, it } from "vitest";
import type { CatalogIndexEntry } from "../../../src/catalog/index-entry.js";
import { unknownCodeMessage, withinOneEdit } from "../../../src/import/validation/code-hints.js";
import { PreflightMemo } from "../../../src/import/validation/preflight.js";
import { catalogIndexOf, indexEntry } from "../../helpers/catalog-index.js";
import { row } from "../../helpers/csv.js";

const plan = (code: string) =>
  indexEntry(code, {
    payout_type: "subscription",
    plan_of: "AMZ-US-00134",
    denominations: { type: "fixed", list: ["9.99"] },
  });

const catalog = catalogIndexOf(
  plan("AMZ-US-00134-M1"),
  plan("AMZ-US-00134-M12"),
  indexEntry("AMZ-US-00225"),
  indexEntry("GIFT-A1"),
  indexEntry("GIFT-A2"),
);

describe("messages for an unknown product code", () => {
  it("a subscription's product code names its plans", () => {
    expect(unknownCodeMessage(catalog, "AMZ-US-00134")).toBe(
      "AMZ-US-00134 is a subscription: order one of its plans, e.g. AMZ-US-00134-M1, AMZ-US-00134-M12",
    );
    expect(unknownCodeMessage(catalog, "amz-us-00134")).toMatch(/^AMZ-US-00134 is a subscription/);
  });

  it("a code in the wrong case suggests the code", () => {
    expect(unknownCodeMessage(catalog, "amz-us-00225")).toBe(
      "unknown product code amz-us-00225: did you mean AMZ-US-00225?",
    );
  });

  it("a code one edit away suggests it; two edits away, nothing", () => {
    for (const typo of ["AMZ-US-0225", "AMZ-US-002255", "AMZ-US-00285", "amz-us-00285"]) {
      expect(unknownCodeMessage(catalog, typo)).toBe(
        `unknown product code ${typo}: did you mean AMZ-US-00225?`,
      );
    }
    expect(unknownCodeMessage(catalog, "AMZ-US-00285X")).toBe("unknown product code AMZ-US-00285X");
    expect(unknownCodeMessage(catalog, "GIFT-A3")).toBe(
      "unknown product code GIFT-A3: did you mean GIFT-A1 or GIFT-A2?",
    );
  });

  it("withinOneEdit counts one insertion, deletion or substitution", () => {
    expect(withinOneEdit("abc", "abc")).toBe(true);
    expect(withinOneEdit("abc", "abd")).toBe(true);
    expect(withinOneEdit("abc", "ab")).toBe(true);
    expect(withinOneEdit("ab", "xab")).toBe(true);
    expect(withinOneEdit("abc", "bca")).toBe(false);
    expect(withinOneEdit("abc", "a")).toBe(false);
    expect(withinOneEdit("abcd", "abdc")).toBe(false);
  });

  it("preflight carries the message, with the row's line and column", () => {
    const memo = new PreflightMemo(catalog);
    expect(memo.check(row({ line: 7, product_code: "AMZ-US-00134", face_value: "9.99" }))).toEqual({
      ok: false,
      errors: [
        {
          line: 7,
          column: "product_code",
          message: expect.stringMatching(/^AMZ-US-00134 is a subscription/),
        },
      ],
    });
  });

  it("stays cheap for a large file: one scan of the index, one search per distinct code", () => {
    const entries: CatalogIndexEntry[] = [];
    for (let i = 0; i < 50_000; i++) entries.push(indexEntry(`CODE-${String(i).padStart(6, "0")}`));
    let scans = 0;
    const big = catalogIndexOf(...entries);
    big.entries = new Proxy(big.entries, {
      ownKeys(target) {
        scans += 1;
        return Reflect.ownKeys(target);
      },
    });
    const memo = new PreflightMemo(big);
    let suggested = 0;
    for (let i = 0; i < 300_000; i++) {
      // CODE-Y00007 is one edit from CODE-000007: every row is a miss with a suggestion.
      const code = `CODE-Y${String(i % 20).padStart(5, "0")}`;
      const result = memo.check(row({ product_code: code, face_value: "10" }));
      if (!result.ok && result.errors[0]!.message.includes("did you mean CODE-0")) suggested += 1;
    }
    expect(suggested).toBe(300_000);
    // One scan of the index for all 300,000 rows of 20 distinct codes (no
    // timing asserted here: speed belongs in test/bench/).
    expect(scans).toBe(1);
  });
});
