import { UserError } from "../errors/user-error.js";
import { currencyDecimals, fromUnits, isPlainDecimal, toUnits } from "../money.js";
import type { CampaignTotals } from "./totals.js";

/** `--budget AMOUNT[:CUR]`. */
export interface Budget {
  amount: string;
  currency?: string;
}

export interface BudgetCheck {
  currency: string;
  budget: string;
  /** What the campaign would pay (prices after discount) in that currency. */
  spend: string;
  within: boolean;
}

/** Parses `--budget 5000` or `--budget 5000.00:USD`; a bad value is a UserError. */
export function parseBudget(text: string): Budget {
  const [amount = "", currency, ...rest] = text.trim().split(":");
  const bad = (why: string) =>
    new UserError(
      `--budget ${JSON.stringify(text)}: ${why} (expected AMOUNT or AMOUNT:CUR, e.g. 5000:USD)`,
    );
  if (rest.length > 0) throw bad("too many ':'");
  if (!isPlainDecimal(amount)) throw bad("the amount must be a plain decimal");
  if (currency === undefined) return { amount };
  if (!/^[A-Za-z]{3}$/.test(currency)) throw bad("the currency must be a 3-letter code");
  return { amount, currency: currency.toUpperCase() };
}

/**
 * Compares the campaign's price total with the budget. A budget without a currency applies
 * when the campaign has one currency; with several, adding amounts across currencies would
 * be meaningless, so the user is asked to name one.
 */
export function checkBudget(budget: Budget, totals: CampaignTotals): BudgetCheck {
  const currencies = totals.currencies();
  const currency = budget.currency ?? (currencies.length <= 1 ? currencies[0] : undefined);
  if (currency === undefined) {
    if (currencies.length === 0) {
      return { currency: "", budget: budget.amount, spend: "0", within: true };
    }
    throw new UserError(
      `--budget ${budget.amount}: the campaign pays in ${currencies.join(", ")}; name the currency, e.g. --budget ${budget.amount}:${currencies[0]}`,
    );
  }
  const scale = currencyDecimals(currency);
  const spendUnits = totals.priceUnits(currency);
  // The budget may carry more digits than the currency; compare at the finer scale.
  const budgetScale = Math.max(scale, budget.amount.split(".")[1]?.length ?? 0);
  const budgetUnits = toUnits(budget.amount, budgetScale);
  const spendScaled = spendUnits * 10n ** BigInt(budgetScale - scale);
  return {
    currency,
    budget: budget.amount,
    spend: fromUnits(spendUnits, scale),
    within: spendScaled <= budgetUnits,
  };
}
