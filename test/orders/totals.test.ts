import { describe, expect, it } from "vitest";
import { toUnits } from "../../src/money.js";
import {
  budgetUnits,
  checkBudgetFlags,
  parseBudget,
  resolveBudgets,
} from "../../src/orders/budget.js";
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

  it("a budget in minor units is rounded down: price ≤ budget exactly when price ≤ its units", () => {
    expect(budgetUnits("0.3", "USD")).toBe(30n);
    expect(budgetUnits("0.299", "USD")).toBe(29n);
    expect(budgetUnits("0.300", "USD")).toBe(30n);
    expect(budgetUnits("1000", "JPY")).toBe(1000n);
    expect(budgetUnits("1000.9", "JPY")).toBe(1000n);
    expect(budgetUnits("1.2345", "KWD")).toBe(1234n);
  });

  it("one budget per currency; a plain amount only alone", () => {
    expect(() => checkBudgetFlags([parseBudget("10:USD"), parseBudget("20:usd")])).toThrow(
      "--budget 20:USD: a second budget for USD; give one budget per currency",
    );
    expect(() => checkBudgetFlags([parseBudget("10"), parseBudget("20:EUR")])).toThrow(
      /--budget 10: name its currency when giving more than one budget/,
    );
    expect(() => checkBudgetFlags([parseBudget("10:USD"), parseBudget("20:EUR")])).not.toThrow();
    expect(() => checkBudgetFlags([parseBudget("10")])).not.toThrow();
  });

  it("resolves budgets against the file's currencies", () => {
    expect(resolveBudgets([parseBudget("0.3")], ["USD"])).toEqual(
      new Map([["USD", { currency: "USD", amount: "0.3", units: 30n }]]),
    );
    expect(() => resolveBudgets([parseBudget("10")], ["EUR", "USD"])).toThrow(
      /the file pays in EUR, USD; give a budget per currency, e.g. --budget 10:EUR/,
    );
    expect(() => resolveBudgets([parseBudget("1:GBP")], ["USD"])).toThrow(
      "--budget 1:GBP: the file has no GBP rows (it pays in USD); give budgets only for its currencies",
    );
    expect(resolveBudgets([parseBudget("10")], [])).toEqual(new Map());
  });
});
