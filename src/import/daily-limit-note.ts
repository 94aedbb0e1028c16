import { type DailyLimit, limitDay, limitText } from "../daily-limit.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CampaignTotals } from "../orders/totals.js";

/**
 * An import whose new rows alone cost more, in a currency, than is left of the day's limit
 * there (docs/commands.md, "The daily limit"): said before the question, never refused. The
 * limit is held when orders are sent, so what fits is sent today and the campaign then pauses
 * with `daily_limit`.
 */
export interface DailyLimitNote {
  currency: string;
  /** The new rows' price, at the currency's scale. */
  price: string;
  /** What is left of the day's limit. */
  left: string;
  limit: string;
  /** The limit's day, `YYYY-MM-DD`, and its time zone. */
  day: string;
  tz: string;
}

/** The notes of the currencies whose new rows' price passes what is left of today's limit. */
export async function dailyLimitNotes(
  ledger: Ledger,
  {
    limit,
    totals,
    now = new Date(),
  }: {
    limit: DailyLimit | undefined;
    totals: CampaignTotals;
    now?: Date;
  },
): Promise<DailyLimitNote[]> {
  if (!limit) return [];
  const day = limitDay(now, limit.tz);
  const notes: DailyLimitNote[] = [];
  for (const currency of totals.currencies()) {
    const cap = limit.limits.get(currency);
    if (!cap) continue;
    const spent = await ledger.dailySpend.spent(currency, day);
    const left = cap.units > spent ? cap.units - spent : 0n;
    const price = totals.priceUnits(currency);
    if (price <= left) continue;
    notes.push({
      currency,
      price: limitText(price, currency),
      left: limitText(left, currency),
      limit: limitText(cap.units, currency),
      day,
      tz: limit.tz,
    });
  }
  return notes;
}

/** `daily limit: the new rows cost 70.00 USD, over the 30.00 USD left today ...`. */
export function dailyLimitLine(note: DailyLimitNote): string {
  const { currency } = note;
  return (
    `daily limit: the new rows cost ${note.price} ${currency}, over the ${note.left} ${currency} left of ` +
    `today's ${currency} limit of ${note.limit} ${currency} (${note.day}, ${note.tz}): what fits is sent today, ` +
    "then the campaigns of that currency pause with daily_limit until the next day or a raised GIFTJOBS_DAILY_LIMIT"
  );
}
