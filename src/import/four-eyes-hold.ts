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
