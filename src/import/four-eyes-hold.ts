import { actorKey } from "../audit/actor.js";
import type { ImportedToday } from "../ledger/imported-today.js";
import { currencyDecimals, toUnits } from "../money.js";
import { unitsText } from "../orders/budget.js";
import type { Existing } from "./import-checks.js";
import type { Survey } from "./import-survey.js";

/**
 * The four-eyes rule at import (docs/architecture/audit.md, "Four eyes"): the campaign's planned
 * price once this file's new rows are recorded (what was recorded before, and the new rows at
 * the prices the import settled), against GIFTJOBS_APPROVAL_THRESHOLD. Returns the first
 * currency it passes in words (`USD 1500.00 over 1000.00`), or undefined.
 */
export function thresholdPassed(
  threshold: Readonly<Record<string, string>> | undefined,
  survey: Survey,
  existing: Existing | undefined,
): string | undefined {
  if (!threshold || survey.newRows === 0) return undefined;
  for (const currency of survey.newTotals.currencies()) {
    const limit = threshold[currency];
    if (limit === undefined) continue;
    const before = BigInt(existing?.meta[`planned_price:${currency}`] ?? "0");
    const planned = before + survey.newTotals.priceUnits(currency);
    if (planned > toUnits(limit, currencyDecimals(currency)))
      return `${currency} ${unitsText(planned, currency)} over ${limit}`;
  }
  return undefined;
}

/** What an import added to its importer's day (ImportedToday), so that it can give it back. */
export interface ImporterDayCount {
  /** The four-eyes rule the importer's day passes, in words, or undefined. */
  rule: string | undefined;
  /** Takes the import's rows off its importer's day: it ended before recording them. */
  giveBack(): Promise<void>;
}

/**
 * The four-eyes rule across campaigns (docs/architecture/audit.md, "Four eyes"): the new rows
 * added to what their importer imported today, in every campaign, against
 * GIFTJOBS_APPROVAL_THRESHOLD, so that a campaign split into several under the threshold is
 * held once their sum passes it. `count` adds them (atomically: two imports at once each see the
 * other's); without it (a dry run) they are only read beside the day's. Returns the first
 * currency it passes in words (`alice's imports of 2026-11-28: USD 1500.00 over 1000.00`).
 */
export async function importerDayPassed(
  survey: Survey,
  {
    threshold,
    importer,
    count,
  }: {
    threshold: Readonly<Record<string, string>> | undefined;
    importer: { name: string; day: string; today: ImportedToday };
    count: boolean;
  },
): Promise<ImporterDayCount> {
  const added: Array<[string, bigint]> = [];
  const { name, day, today } = importer;
  const who = actorKey(name);
  let rule: string | undefined;
  if (survey.newRows === 0) return { rule, giveBack: async () => {} };
  // Counted with or without a threshold, in every currency: one set at noon counts the morning.
  for (const currency of survey.newTotals.currencies()) {
    const limit = threshold?.[currency];
    const units = survey.newTotals.priceUnits(currency);
    const total = count
      ? await today.add(day, who, currency, units)
      : (await today.read(day, who, currency)) + units;
    if (count) added.push([currency, units]);
    if (!rule && limit !== undefined && total > toUnits(limit, currencyDecimals(currency)))
      rule = `${name}'s imports of ${day}: ${currency} ${unitsText(total, currency)} over ${limit}`;
  }
  const giveBack = async () => {
    for (const [currency, units] of added.splice(0)) await today.add(day, who, currency, -units);
  };
  return { rule, giveBack };
}
