import type { Redis } from "ioredis";
import { type DailyLimit, dayAfter, limitDay, limitText } from "../daily-limit.js";
import { redisKey } from "../redis/redis-key.js";
import { runScript } from "../redis/scripts.js";

/**
 * The daily limit across campaigns in the ledger (docs/architecture/ledger.md, "The daily
 * limit"): the day's spend per currency, reserved by START and given back by TRANSITION (their
 * extra key and arguments are made here), and the pause of the campaigns of a currency once it
 * is reached.
 */

/** Days of spend kept: today's and the week before (a retry's release may come late). */
const DAYS_KEPT = 7;

/** The hash of the day's spend, field `CUR:YYYY-MM-DD`, minor units. */
export function dailySpendKey(prefix: string): string {
  return redisKey(prefix, "daily-spend");
}

const limitsJson = new WeakMap<DailyLimit, string>();

/**
 * START's named fields of the day: the limits as JSON {CUR: units} ('' for none), the day, the
 * first day kept. The day is counted whether or not a limit is set (in UTC without settings), so
 * a limit set at noon counts the morning.
 */
export function startLimitArgs(
  limit: DailyLimit | undefined,
  now = new Date(),
): { limits: string; day: string; oldest: string } {
  const day = limitDay(now, limit?.tz ?? "UTC");
  return { limits: limit ? limitsJsonOf(limit) : "", day, oldest: dayAfter(day, -DAYS_KEPT) };
}

/** The limits as START reads them, made once per settings: '' when no currency has one. */
function limitsJsonOf(limit: DailyLimit): string {
  let json = limitsJson.get(limit);
  if (json === undefined) {
    const units: Record<string, string> = {};
    for (const [currency, l] of limit.limits) units[currency] = String(l.units);
    json = limit.limits.size > 0 ? JSON.stringify(units) : "";
    limitsJson.set(limit, json);
  }
  return json;
}

/** What START answers when the daily limit stops an order (minor units). */
export interface LimitReached {
  currency: string;
  spent: bigint;
  limit: bigint;
  /** Undefined when the order has no recorded price. */
  price: bigint | undefined;
  /** The limit's day, `YYYY-MM-DD`. */
  day: string;
}

/** START's answer `{'daily_limit', currency, spent, limit, price, day}` read (its values). */
export function limitReachedOf(answer: readonly unknown[]): LimitReached {
  const [currency, spent, limit, price, day] = answer.map(String) as [
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    currency,
    spent: BigInt(spent),
    limit: BigInt(limit),
    price: price === "" ? undefined : BigInt(price),
    day,
  };
}

/**
 * The pause reason of the daily limit, without the resume command: led by `daily_limit`, as
 * pause reasons are led by their type (jobs/orders/pause-reason.ts), then what to do.
 */
export function limitReason(reached: LimitReached, tz: string): string {
  const { currency, day } = reached;
  const money = (units: bigint) => `${limitText(units, currency)} ${currency}`;
  const next =
    reached.price === undefined
      ? "an order of no recorded price cannot be held against it"
      : `the next order (${money(reached.price)}) would pass it`;
  return (
    `daily_limit: ${money(reached.spent)} of the ${currency} daily limit of ${money(reached.limit)} ` +
    `spent on ${day} (${tz}); ${next}. Wait for ${dayAfter(day)} (${tz}), or raise ` +
    "GIFTJOBS_DAILY_LIMIT and restart the workers"
  );
}

/** The day's spend of a currency, and the pause of the campaigns paying in it. */
export class DailySpend {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly keysOf: (campaign: string) => { meta: string; counts: string },
    private readonly runningKey: string,
  ) {}

  /** What the day's orders in `currency` cost so far (reserved: sent or being sent), minor units. */
  async spent(currency: string, day: string): Promise<bigint> {
    const value = await this.redis.hget(dailySpendKey(this.prefix), `${currency}:${day}`);
    return BigInt(value ?? "0");
  }

  /** What each currency's orders of `day` cost so far, minor units, by currency (sorted). */
  async onDay(day: string): Promise<Map<string, bigint>> {
    const fields = await this.redis.hgetall(dailySpendKey(this.prefix));
    const spent = new Map<string, bigint>();
    // By code point, not localeCompare: the same order for these fields (CURRENCY:YYYY-MM-DD),
    // and no ICU collator loaded for it (src/grouped.ts).
    for (const [field, value] of Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const at = field.indexOf(":");
      if (field.slice(at + 1) === day) spent.set(field.slice(0, at), BigInt(value));
    }
    return spent;
  }

  /**
   * Pauses every running campaign with orders in `currency` and rows still to send, `campaign`
   * among them, with
   * `reason` and each one's resume command (lua/pause-for-limit.lua). Returns those it paused.
   */
  async pauseCampaigns(campaign: string, currency: string, reason: string): Promise<string[]> {
    const running = new Set(await this.redis.smembers(this.runningKey));
    running.add(campaign);
    const campaigns = [...running];
    const keys = [this.runningKey];
    for (const name of campaigns) {
      const k = this.keysOf(name);
      keys.push(k.meta, k.counts);
    }
    const args = { currency, reason, now: new Date().toISOString(), campaigns };
    const paused = await runScript(this.redis, "giftjobsLedgerPauseForLimit", keys, [
      JSON.stringify(args),
    ]);
    return paused as string[];
  }
}
