/**
 * The daily limit across campaigns (`GIFTJOBS_DAILY_LIMIT`, `GIFTJOBS_LIMIT_TZ`): its parsing
 * and the day it counts in. How it is kept is in docs/architecture/ledger.md, "The daily limit".
 */

import { currencyDecimals, decimalPlaces, fromUnits, isPlainDecimal, toUnits } from "./money.js";

/** The most one currency may spend in a day, across every campaign. */
export interface CurrencyLimit {
  currency: string;
  /** As given (for messages). */
  amount: string;
  /** Minor units, rounded down: prices are whole minor units (as budgets are). */
  units: bigint;
}

/** The daily limit's settings, by currency; a currency not in `limits` has none. */
export interface DailyLimit {
  limits: ReadonlyMap<string, CurrencyLimit>;
  /** The IANA time zone whose midnight starts a day. */
  tz: string;
}

/**
 * Parses `USD:5000,EUR:2000.50`: one amount per currency, each a plain decimal. Throws an Error
 * whose message says what is wrong (the config names the setting); empty text is no limit.
 */
export function parseDailyLimit(text: string): CurrencyLimit[] {
  const out: CurrencyLimit[] = [];
  for (const part of text.split(",").map((p) => p.trim())) {
    if (part === "") continue;
    const [currency = "", amount = "", ...rest] = part.split(":").map((p) => p.trim());
    const bad = (why: string) =>
      new Error(
        `${JSON.stringify(part)}: ${why} (expected CUR:AMOUNT,..., e.g. USD:5000,EUR:2000)`,
      );
    if (rest.length > 0 || amount === "") throw bad("give each as CUR:AMOUNT");
    if (!/^[A-Za-z]{3}$/.test(currency)) throw bad("the currency must be a 3-letter code");
    if (!isPlainDecimal(amount)) throw bad("the amount must be a plain decimal");
    const code = currency.toUpperCase();
    if (out.some((l) => l.currency === code)) throw bad(`a second limit for ${code}`);
    out.push({ currency: code, amount, units: unitsDown(amount, code) });
  }
  return out;
}

/** An amount in the currency's minor units, rounded down. */
function unitsDown(amount: string, currency: string): bigint {
  const scale = currencyDecimals(currency);
  const finer = Math.max(scale, decimalPlaces(amount));
  return toUnits(amount, finer) / 10n ** BigInt(finer - scale);
}

/** True for a time zone the runtime knows (IANA names such as `UTC`, `Europe/Paris`). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-CA", { timeZone: tz });
    return tz.trim() !== "";
  } catch {
    return false;
  }
}

/** The day `now` falls in, in `tz`, as `YYYY-MM-DD`: the day the limit counts in. */
export function limitDay(now: Date, tz: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: tz,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")}`;
}

/** The day `days` after `day` (`YYYY-MM-DD`, a calendar day: no time zone involved). */
export function dayAfter(day: string, days = 1): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/** The settings as the config holds them; undefined when no currency has a limit. */
export function dailyLimitOf(config: {
  dailyLimit: readonly CurrencyLimit[];
  limitTz: string;
}): DailyLimit | undefined {
  if (config.dailyLimit.length === 0) return undefined;
  return {
    limits: new Map(config.dailyLimit.map((l) => [l.currency, l])),
    tz: config.limitTz,
  };
}

/** Minor units as a decimal at the currency's scale ("500000", USD -> "5000.00"). */
export function limitText(units: bigint | string, currency: string): string {
  return fromUnits(BigInt(units), currencyDecimals(currency));
}
