import { describe, expect, it } from "vitest";
import { toUnits } from "../../src/money.js";
import { checkBudget, parseBudget } from "../../src/orders/budget.js";
import { CampaignTotals } from "../../src/orders/totals.js";

function totalsOf(rows: [string, string, string][]): CampaignTotals {
  const totals = new CampaignTotals();
  for (const [currency, face, price] of rows)
    totals.add(
      currency,
      toUnits(face, currency === "JPY" ? 0 : 2),
      toUnits(price, currency === "JPY" ? 0 : 2),
    );
  return totals;
}

describe("CampaignTotals", () => {
  it("sums exactly per currency", () => {
    const totals = totalsOf([
      ["USD", "0.1", "0.1"],
      ["USD", "0.2", "0.2"],
      ["JPY", "1000", "950"],
    ]);
    expect(totals.toJSON()).toEqual({
      JPY: { face_value: "1000", price: "950", rows: 1 },
      USD: { face_value: "0.30", price: "0.30", rows: 2 },
    });
  });

  it("stays exact over many rows", () => {
    const totals = new CampaignTotals();
    // 100,000 x 0.10 summed as floats drifts; in minor units it cannot.
    for (let i = 0; i < 100_000; i++) totals.add("USD", toUnits("0.1", 2), toUnits("0.09", 2));
    expect(totals.toJSON().USD).toEqual({
      face_value: "10000.00",
      price: "9000.00",
      rows: 100_000,
    });
  });
});

describe("budget", () => {
  it("parses AMOUNT[:CUR]", () => {
    expect(parseBudget("5000")).toEqual({ amount: "5000" });
    expect(parseBudget("5000.50:usd")).toEqual({ amount: "5000.50", currency: "USD" });
    for (const bad of ["", "-5", "1e3", "5,000", "5000:US", "5:USD:EUR", "$5"]) {
      expect(() => parseBudget(bad), bad).toThrow(/--budget/);
    }
  });

  it("compares the price total with the budget, at the finer scale", () => {
    const totals = totalsOf([
      ["USD", "0.1", "0.1"],
      ["USD", "0.2", "0.2"],
    ]);
    expect(checkBudget(parseBudget("0.3"), totals)).toEqual({
      currency: "USD",
      budget: "0.3",
      spend: "0.30",
      within: true,
    });
    expect(checkBudget(parseBudget("0.299"), totals).within).toBe(false);
    expect(checkBudget(parseBudget("0.300"), totals).within).toBe(true);
    expect(checkBudget(parseBudget("1:EUR"), totals)).toEqual({
      currency: "EUR",
      budget: "1",
      spend: "0.00",
      within: true,
    });
  });

  it("asks for the currency when the campaign has several", () => {
    const totals = totalsOf([
      ["USD", "1", "1"],
      ["EUR", "1", "1"],
    ]);
    expect(() => checkBudget(parseBudget("10"), totals)).toThrow(
      /EUR, USD; name the currency, e.g. --budget 10:EUR/,
    );
    expect(checkBudget(parseBudget("0.99:EUR"), totals).within).toBe(false);
  });
});
