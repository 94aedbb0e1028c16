import { type DailyLimit, limitDay, limitText } from "../daily-limit.js";
import type { Ledger } from "../ledger/ledger.js";

/** One currency's spend today: decimals as strings at the currency's scale. */
interface CurrencySpend {
  currency: string;
  spent: string;
  /** The daily limit where this runs, if the currency has one. */
  limit?: string;
}

/** Today's spend across campaigns, per currency (docs/commands.md, "The daily limit"). */
export interface TodaySpend {
  /** `YYYY-MM-DD` in `tz`. */
  day: string;
  tz: string;
  currencies: CurrencySpend[];
}

/**
 * What the day's spend holds for today, every currency with a spend or a limit: every order sent
 * today, whether or not a limit was set when it was sent.
 */
export async function todaySpend(
  ledger: Ledger,
  settings: DailyLimit,
  now = new Date(),
): Promise<TodaySpend> {
  const day = limitDay(now, settings.tz);
  const spent = await ledger.dailySpend.onDay(day);
  const currencies = [...new Set([...spent.keys(), ...settings.limits.keys()])].sort();
  return {
    day,
    tz: settings.tz,
    currencies: currencies.map((currency) => {
      const limit = settings.limits.get(currency);
      return {
        currency,
        spent: limitText(spent.get(currency) ?? 0n, currency),
        ...(limit ? { limit: limitText(limit.units, currency) } : {}),
      };
    }),
  };
}

/** One line: `today (2024-05-01, UTC): 2498.56 USD spent of the 3000.00 USD daily limit; ...`. */
export function todaySpendText(today: TodaySpend): string {
  const at = `today (${today.day}, ${today.tz})`;
  if (today.currencies.length === 0) return `${at}: nothing spent`;
  const parts = today.currencies.map(
    ({ currency, spent, limit }) =>
      `${spent} ${currency} spent${limit ? ` of the ${limit} ${currency} daily limit` : " (no limit)"}`,
  );
  return `${at}: ${parts.join("; ")}`;
}
