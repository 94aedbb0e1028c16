import { type DailyLimit, dayAfter, limitDay } from "../daily-limit.js";
import { UserError } from "../errors/user-error.js";
import { currencyDecimals, toUnits } from "../money.js";

/** The head of a daily_limit pause reason (src/ledger/daily-limit.ts, limitReason). */
const LIMIT_REASON =
  /^daily_limit: \S+ [A-Z]{3} of the ([A-Z]{3}) daily limit of ([\d.]+) [A-Z]{3} spent on (\d{4}-\d{2}-\d{2}) \(/;

/**
 * Refuses the resume of a campaign the daily limit paused while nothing changed: the same day
 * (in GIFTJOBS_LIMIT_TZ) and a limit no higher than the one it met. Resuming then would only
 * pause it again at its next order (docs/commands.md, "The daily limit"). No limit set where
 * this runs, or another pause reason: allowed.
 */
export function checkLimitResume(
  campaign: string,
  reason: string | undefined,
  limit: DailyLimit | undefined,
  now = new Date(),
): void {
  const match = reason ? LIMIT_REASON.exec(reason) : null;
  if (!match || !limit) return;
  const [, currency, amount, day] = match as unknown as [string, string, string, string];
  const current = limit.limits.get(currency);
  if (!current || limitDay(now, limit.tz) !== day) return;
  // The reason prints the limit at the currency's scale (limitText): its units exactly.
  if (current.units > toUnits(amount, currencyDecimals(currency))) return;
  throw new UserError(
    `campaign ${campaign} was paused by the ${currency} daily limit of ${amount} ${currency} today (${day}, ${limit.tz}): resume it from ${dayAfter(day)} (${limit.tz}), or raise GIFTJOBS_DAILY_LIMIT (and restart the workers) first`,
  );
}
