import { describe, expect, it } from "vitest";
import {
  canonicalDecimal,
  compareDecimal,
  discountedPriceUnits,
  fromUnits,
  isPlainDecimal,
  shownMoney,
  toUnits,
} from "../src/money.js";

describe("money", () => {
  it("shows an amount in its currency's minor units, and other text as it is", () => {
    expect(shownMoney("25", "USD")).toBe("25.00");
    expect(shownMoney("12.5", "eur")).toBe("12.50");
    expect(shownMoney("25.00", "USD")).toBe("25.00");
    expect(shownMoney("1000", "JPY")).toBe("1000");
    expect(shownMoney("1000.00", "JPY")).toBe("1000");
    expect(shownMoney("12.505", "USD")).toBe("12.505");
    expect(shownMoney("12,5", "USD")).toBe("12,5");
    expect(shownMoney("25", undefined)).toBe("25");
  });

  it("accepts only plain decimals", () => {
    for (const ok of ["0", "10", "10.5", "10.50", "0.01"]) expect(isPlainDecimal(ok)).toBe(true);
    for (const bad of [
      "1e3",
      "$10",
      "1,000",
      "NaN",
      "-1",
      "+1",
      "01",
      "1.",
      ".5",
      " 1",
      "Infinity",
    ]) {
      expect(isPlainDecimal(bad)).toBe(false);
    }
  });

  it("converts to and from units exactly", () => {
    expect(toUnits("10.5", 2)).toBe(1050n);
    expect(fromUnits(1050n, 2)).toBe("10.50");
    expect(fromUnits(5n, 2)).toBe("0.05");
    expect(fromUnits(7n, 0)).toBe("7");
    expect(() => toUnits("1.234", 2)).toThrow(/more than 2 decimals/);
    // 0.1 + 0.2 done in units is exact
    expect(fromUnits(toUnits("0.1", 2) + toUnits("0.2", 2), 2)).toBe("0.30");
  });

  it("compares and discounts", () => {
    expect(compareDecimal("10.00", "10")).toBe(0);
    expect(compareDecimal("9.99", "10")).toBe(-1);
    // 25.00 with 1.30% discount: 25 - 0.325 -> 25 - 0.33 (half-up) = 24.67
    expect(fromUnits(discountedPriceUnits("25", "0.0130", "USD"), 2)).toBe("24.67");
    expect(fromUnits(discountedPriceUnits("1000", "0.05", "JPY"), 0)).toBe("950");
  });

  it("spells equal decimals the same way", () => {
    expect(canonicalDecimal("10.50")).toBe("10.5");
    expect(canonicalDecimal("10.5")).toBe("10.5");
    expect(canonicalDecimal("10.00")).toBe("10");
    expect(canonicalDecimal("100")).toBe("100");
    expect(canonicalDecimal("0.010")).toBe("0.01");
    expect(canonicalDecimal("0.0")).toBe("0");
    expect(() => canonicalDecimal("1e3")).toThrow(/plain decimal/);
  });
});
