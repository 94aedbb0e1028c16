/**
 * The daily limit across campaigns (`GIFTJOBS_DAILY_LIMIT`, `GIFTJOBS_LIMIT_TZ`): its settings
 * and the day it counts in. How it is kept is in docs/architecture/ledger.md, "The daily limit".
 */

import { currencyDecimals, fromUnits, toUnits } from "./money.js";

/** The most one currency may spend in a day, across every campaign. */
interface CurrencyLimit {
  currency: string;
  /** As given (for messages). */
  amount: string;
  /** Minor units. */
  units: bigint;
}

/** The daily limit's settings, by currency; a currency not in `limits` has none. */
export interface DailyLimit {
  limits: ReadonlyMap<string, CurrencyLimit>;
  /** The IANA time zone whose midnight starts a day. */
  tz: string;
}

/** True for a time zone the runtime knows (IANA names such as `UTC`, `Europe/Paris`). */
export function isTimeZone(tz: string): boolean {
  // The default, which every runtime knows: a first Intl.DateTimeFormat loads ICU's locale and
  // time zone data, some 20 ms of the start of every command that reads the configuration.
  if (tz === "UTC") return true;
  try {
    new Intl.DateTimeFormat("en-CA", { timeZone: tz });
    return tz.trim() !== "";
  } catch {
    return false;
  }
}

/** The day `now` falls in, in `tz`, as `YYYY-MM-DD`: the day the limit counts in. */
export function limitDay(now: Date, tz: string): string {
  // UTC's day is the ISO date: no Intl.DateTimeFormat, whose first one loads ICU (see isTimeZone).
  if (tz === "UTC") return now.toISOString().slice(0, 10);
  const parts = dayFormat(tz).formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")}`;
}

/**
 * One formatter per time zone: building an Intl.DateTimeFormat costs about a quarter of a
 * millisecond, and a worker asks for the day with every order it starts.
 */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

function dayFormat(tz: string): Intl.DateTimeFormat {
  let format = dayFormats.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone: tz,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    dayFormats.set(tz, format);
  }
  return format;
}

/** The day `days` after `day` (`YYYY-MM-DD`, a calendar day: no time zone involved). */
export function dayAfter(day: string, days = 1): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/**
 * The settings as the config holds them (GIFTJOBS_DAILY_LIMIT read as amounts by currency at
 * the currency's scale); undefined when no currency has a limit.
 */
export function dailyLimitOf(config: {
  dailyLimit: Readonly<Record<string, string>> | undefined;
  limitTz: string;
}): DailyLimit | undefined {
  const entries = Object.entries(config.dailyLimit ?? {});
  if (entries.length === 0) return undefined;
  return {
    limits: new Map(
      entries.map(([currency, amount]) => [
        currency,
        { currency, amount, units: toUnits(amount, currencyDecimals(currency)) },
      ]),
    ),
    tz: config.limitTz,
  };
}

/**
 * What a worker counts the day's spend with: the limits (none when no currency has one) and the
 * day's time zone. The spend is counted limit or none (docs/architecture/ledger.md, "The daily
 * limit").
 */
export function daySpendOf(config: {
  dailyLimit: Readonly<Record<string, string>> | undefined;
  limitTz: string;
}): DailyLimit {
  return dailyLimitOf(config) ?? { limits: new Map(), tz: config.limitTz };
}

/** Minor units as a decimal at the currency's scale ("500000", USD -> "5000.00"). */
export function limitText(units: bigint | string, currency: string): string {
  return fromUnits(BigInt(units), currencyDecimals(currency));
}
