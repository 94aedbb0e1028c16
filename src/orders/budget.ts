import { UserError } from "../errors/user-error.js";
import { currencyDecimals, decimalPlaces, fromUnits, isPlainDecimal, toUnits } from "../money.js";

/** `--budget AMOUNT[:CUR]`. */
export interface Budget {
  amount: string;
  currency?: string;
}

/** A 3-letter currency code (`--currency`), upper-cased; anything else names the flag. */
export function currencyCode(flag: string, value: string): string {
  if (!/^[A-Za-z]{3}$/.test(value))
    throw new UserError(`${flag} must be a 3-letter currency code such as USD (got ${value})`);
  return value.toUpperCase();
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

export function budgetText(budget: Budget): string {
  return `--budget ${budget.amount}${budget.currency ? `:${budget.currency}` : ""}`;
}

/**
 * Checks the budgets among themselves, before the file is read: one per currency, and a plain
 * amount (no currency) only alone.
 */
export function checkBudgetFlags(budgets: readonly Budget[]): void {
  const seen = new Set<string>();
  for (const budget of budgets) {
    if (!budget.currency) {
      if (budgets.length > 1)
        throw new UserError(
          `${budgetText(budget)}: name its currency when giving more than one budget, e.g. --budget ${budget.amount}:USD`,
        );
      continue;
    }
    if (seen.has(budget.currency))
      throw new UserError(
        `${budgetText(budget)}: a second budget for ${budget.currency}; give one budget per currency`,
      );
    seen.add(budget.currency);
  }
}

/** A budget in one currency, in its minor units. */
export interface CurrencyBudget {
  currency: string;
  /** As given (for messages). */
  amount: string;
  /**
   * Minor units, rounded down: prices are whole minor units, so price ≤ amount exactly when
   * price ≤ units.
   */
  units: bigint;
}

/**
 * A budget amount in the currency's minor units, rounded down (see CurrencyBudget.units).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function budgetUnits(amount: string, currency: string): bigint {
  const scale = currencyDecimals(currency);
  const finer = Math.max(scale, decimalPlaces(amount));
  return toUnits(amount, finer) / 10n ** BigInt(finer - scale);
}

/**
 * The budgets given for a file that pays in `currencies` (sorted), one per currency. A plain
 * amount is the budget of a file of one currency. Refused (UserError, naming it): a plain amount
 * for a file of several currencies, a budget for a currency the file does not pay in. A file
 * currency without one is the caller's to judge (a campaign may have one stored).
 */
export function resolveBudgets(
  budgets: readonly Budget[],
  currencies: readonly string[],
): Map<string, CurrencyBudget> {
  const out = new Map<string, CurrencyBudget>();
  for (const budget of budgets) {
    let currency = budget.currency;
    if (!currency) {
      // A file with no valid row spends nothing: a plain budget has nothing to apply to.
      if (currencies.length === 0) continue;
      if (currencies.length > 1)
        throw new UserError(
          `${budgetText(budget)}: the file pays in ${currencies.join(", ")}; give a budget per currency, e.g. --budget ${budget.amount}:${currencies[0]}`,
        );
      currency = currencies[0]!;
    } else if (!currencies.includes(currency)) {
      throw new UserError(
        `${budgetText(budget)}: the file has no ${currency} rows (it pays in ${currencies.join(", ") || "nothing"}); give budgets only for its currencies`,
      );
    }
    out.set(currency, {
      currency,
      amount: budget.amount,
      units: budgetUnits(budget.amount, currency),
    });
  }
  return out;
}

/** Minor units as a decimal at the currency's scale. */
export function unitsText(units: bigint, currency: string): string {
  return fromUnits(units, currencyDecimals(currency));
}
