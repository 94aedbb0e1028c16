import { quoted } from "./quoted.js";

/** How far ahead a row may be scheduled (issue: at most 90 days). */
const MAX_SEND_AHEAD_DAYS = 90;

const DAY_MS = 24 * 60 * 60 * 1000;

/** `2026-12-24`, or `2026-12-24T09:30`, `...:15`, `...:15.250`, then `Z` or `+01:00` (a space for the T too). */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * A row's `send_at` as a time (ms since 1970): its order is not created before then. A date
 * alone is that day's 00:00 UTC; a date-time needs its zone (`Z` or an offset), since a clock
 * time without one means different moments to the person who wrote it and to the server. A
 * time past is "now"; one more than MAX_SEND_AHEAD_DAYS after `now` is refused (a typo in the
 * year, most likely).
 */
export function parseSendAt(text: string, now: number): { at: number } | { error: string } {
  const match = ISO.exec(text.trim());
  if (!match)
    return {
      error: `send_at must be an ISO date (2026-12-24, sent from 00:00 UTC) or date-time with its zone (2026-12-24T09:00Z, 2026-12-24T09:00+01:00), got ${quoted(text)}`,
    };
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  if (hour !== undefined && zone === undefined)
    return {
      error: `send_at ${quoted(text)} has no time zone: add Z for UTC or an offset such as +01:00`,
    };
  const at = Date.parse(
    `${year}-${month}-${day}T${hour ?? "00"}:${minute ?? "00"}:${second ?? "00"}.${(fraction ?? "0").padEnd(3, "0")}${zone ?? "Z"}`,
  );
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const realDay =
    calendar.getUTCFullYear() === Number(year) &&
    calendar.getUTCMonth() === Number(month) - 1 &&
    calendar.getUTCDate() === Number(day);
  if (!Number.isFinite(at) || !realDay || Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59)
    return { error: `send_at ${quoted(text)} is not a real date and time` };
  if (at > now + MAX_SEND_AHEAD_DAYS * DAY_MS)
    return {
      error: `send_at ${quoted(text)} is more than ${MAX_SEND_AHEAD_DAYS} days ahead: rows may be scheduled up to ${new Date(now + MAX_SEND_AHEAD_DAYS * DAY_MS).toISOString().slice(0, 10)}`,
    };
  return { at };
}
