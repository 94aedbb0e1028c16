import { describe, expect, it } from "vitest";
import type { CatalogIndex } from "../../../src/catalog/index-entry.js";
import { PreflightMemo, preflightRow } from "../../../src/import/validation/preflight.js";
import { indexEntry } from "../../helpers/catalog-index.js";
import { row } from "../../helpers/csv.js";

const catalog: CatalogIndex = {
  fetched_at: "2026-01-01T00:00:00Z",
  entries: {
    OPEN: indexEntry("OPEN"),
    FIXED: indexEntry("FIXED", {
      denominations: { type: "fixed", list: ["10.00", "25.00", "50"] },
    }),
    YEN: indexEntry("YEN", {
      currency: "JPY",
      denominations: { type: "open", min: "500", max: "50000" },
      discount_multiplier: "0.05",
    }),
    OFF: indexEntry("OFF", { is_orderable: false }),
    DOWN: indexEntry("DOWN", { state: "TEMPORARILY_DISABLED" }),
    ODD: indexEntry("ODD", { payout_type: "mystery", denominations: null }),
  },
};

function check(code: string, face: string, currency?: string) {
  return preflightRow(row({ line: 5, product_code: code, face_value: face }), catalog, {
    currency,
  });
}

function messageOf(result: ReturnType<typeof check>) {
  return result.ok ? undefined : result.errors[0];
}

describe("preflightRow", () => {
  it("passes a good row with its currency, price and face in minor units", () => {
    expect(check("OPEN", "25")).toEqual({
      ok: true,
      currency: "USD",
      priceUnits: 2467n,
      price: "24.67",
      faceUnits: 2500n,
    });
    expect(check("YEN", "1000")).toMatchObject({ ok: true, currency: "JPY", price: "950" });
  });

  it("refuses unknown, unorderable, disabled and unreadable products", () => {
    expect(messageOf(check("NOPE", "10"))).toEqual({
      line: 5,
      column: "product_code",
      message: "unknown product code NOPE",
    });
    expect(messageOf(check("OFF", "10"))?.message).toBe("product OFF is not orderable");
    expect(messageOf(check("DOWN", "10"))?.message).toBe(
      "product DOWN is TEMPORARILY_DISABLED, not LIVE or TEMPORARILY_DEGRADED",
    );
    expect(messageOf(check("ODD", "10"))?.message).toMatch(/no denominations/);
  });

  it("checks open ranges inclusively and exactly", () => {
    expect(check("OPEN", "5").ok).toBe(true);
    expect(check("OPEN", "500").ok).toBe(true);
    expect(check("OPEN", "500.00").ok).toBe(true);
    expect(messageOf(check("OPEN", "500.01"))).toMatchObject({
      column: "face_value",
      message: "face_value 500.01 is outside OPEN's range 5..500.00 USD",
    });
    expect(check("OPEN", "4.99").ok).toBe(false);
  });

  it("checks fixed lists as decimals", () => {
    expect(check("FIXED", "10").ok).toBe(true);
    expect(check("FIXED", "25.0").ok).toBe(true);
    expect(check("FIXED", "50.00").ok).toBe(true);
    expect(messageOf(check("FIXED", "15"))?.message).toBe(
      "face_value 15 is not one of FIXED's denominations: 10.00, 25.00, 50 USD",
    );
  });

  it("checks decimals against the currency", () => {
    expect(messageOf(check("OPEN", "10.555"))?.message).toBe(
      "face_value 10.555 has more decimals than USD allows (2)",
    );
    expect(check("OPEN", "10.500").ok).toBe(true);
    expect(messageOf(check("YEN", "1000.5"))?.message).toBe(
      "face_value 1000.5 has more decimals than JPY allows (0)",
    );
    expect(check("YEN", "1000.00").ok).toBe(true);
  });

  it("requires the payment currency to be the product's", () => {
    expect(check("OPEN", "10", "usd").ok).toBe(true);
    expect(messageOf(check("OPEN", "10", "EUR"))?.message).toBe(
      "product OPEN is sold in USD, not EUR (--currency)",
    );
  });

  it("works without a catalog given --currency, price = face value", () => {
    const r = row({ face_value: "10.5" });
    expect(preflightRow(r, undefined, { currency: "EUR" })).toEqual({
      ok: true,
      currency: "EUR",
      priceUnits: 1050n,
      price: "10.50",
      faceUnits: 1050n,
    });
    expect(preflightRow(r, undefined)).toMatchObject({
      ok: false,
      errors: [{ message: expect.stringMatching(/--currency/) }],
    });
    expect(preflightRow(r, undefined, { currency: "JPY" }).ok).toBe(false);
  });
});

describe("PreflightMemo", () => {
  const at = (line: number, product_code: string, face_value: string) =>
    row({ line, product_code, face_value });

  it("answers as preflightRow does, failures naming each row's own line", () => {
    const memo = new PreflightMemo(catalog);
    for (const [code, face] of [
      ["OPEN", "25"],
      ["FIXED", "25.00"],
      ["FIXED", "26"],
      ["YEN", "1000"],
      ["OFF", "10"],
    ] as const) {
      for (const line of [2, 9]) {
        expect(memo.check(at(line, code, face))).toEqual(
          preflightRow(at(line, code, face), catalog),
        );
      }
    }
  });

  it("keeps the currency option, and no more pairs than its limit", () => {
    const memo = new PreflightMemo(catalog, { currency: "EUR" }, 2);
    expect(memo.check(at(3, "OPEN", "25"))).toMatchObject({ ok: false });
    const open = new PreflightMemo(catalog, {}, 2);
    const first = open.check(at(2, "OPEN", "10"));
    open.check(at(3, "OPEN", "11"));
    const third = open.check(at(4, "OPEN", "12"));
    expect(open.check(at(5, "OPEN", "10"))).toBe(first);
    // Past the limit the pair is checked again each time: equal, not the same object.
    expect(open.check(at(6, "OPEN", "12"))).not.toBe(third);
    expect(open.check(at(6, "OPEN", "12"))).toEqual(third);
  });
});
