import type { StoredState } from "../ledger/types.js";
import type { DailyLimitNote } from "./daily-limit-note.js";
import type { ImporterDayCount } from "./four-eyes-hold.js";
import type { Existing } from "./import-checks.js";
import { ImportRefused } from "./import-errors.js";
import type { Survey } from "./import-survey.js";
import type { ImportResult } from "./import-types.js";
import type { Pricing } from "./pricing.js";

/** Whether the campaign is held by this import, and the state it is left in. */
export interface Holding {
  /** --hold, or held by the four-eyes rule. */
  hold: boolean;
  /** The campaign is new or gets new rows: an existing one is held before them. */
  holdNow: boolean;
  state: StoredState;
}

/** How the campaign is held once `hold` is known (--hold, then the four-eyes rule). */
export function holdingOf(hold: boolean, existing: Existing | undefined, survey: Survey): Holding {
  const holdNow = hold && (!existing || survey.newRows > 0);
  const closed = existing?.state === "cancelled" || existing?.state === "archived";
  const state = holdNow && !closed ? "held" : (existing?.state ?? "running");
  return { hold, holdNow, state };
}

/**
 * What the import answers (ImportResult), settled a step at a time: pass 1's survey, then what
 * the checks between the passes decide (the prices, the hold, the budgets, the daily limit). A
 * refusal answers with what was settled before it (docs/architecture/import.md, "Approval,
 * appending and budgets").
 */
export class ImportReport {
  pricing: Pricing | undefined;
  /** The price that passed GIFTJOBS_APPROVAL_THRESHOLD, when one did. */
  fourEyes: string | undefined;
  /** The new rows counted in their importer's day (four eyes), to give back if not recorded. */
  importerDay: ImporterDayCount | undefined;
  budgetsReplaced: ImportResult["budgets_replaced"];
  limitNotes: DailyLimitNote[] = [];

  constructor(
    readonly campaign: string,
    readonly survey: Survey,
    private readonly run: { dryRun: boolean; errorFile: string | undefined },
    public holding: Holding,
  ) {}

  result(enqueued = 0, orders = 0): ImportResult {
    const { campaign, survey, pricing, budgetsReplaced, limitNotes, fourEyes } = this;
    return {
      campaign,
      rows: survey.rows,
      valid: survey.valid,
      invalid: survey.rows - survey.valid,
      enqueued,
      already_known: survey.known,
      orders,
      totals: survey.totals.toJSON(),
      ...(pricing ? { priced_by: pricing.by } : {}),
      ...(pricing?.note ? { pricing_note: pricing.note } : {}),
      errors: [...survey.errors].sort((a, b) => a.line - b.line),
      more_errors: Math.max(0, survey.errorCount - survey.errors.length),
      ...(survey.errorCount > survey.invalidRows ? { problems: survey.errorCount } : {}),
      ...(survey.leftOut.size > 0 ? { left_out: Object.fromEntries(survey.leftOut) } : {}),
      error_file: survey.errorCount > 0 ? this.run.errorFile : undefined,
      dry_run: this.run.dryRun,
      state: this.holding.state,
      ...(budgetsReplaced?.length ? { budgets_replaced: budgetsReplaced } : {}),
      ...(survey.repeats && survey.repeats.rows > 0 ? { repeats: survey.repeats.list() } : {}),
      ...(limitNotes.length > 0 ? { daily_limit: limitNotes } : {}),
      ...(fourEyes ? { four_eyes: fourEyes } : {}),
    };
  }

  /** The import refused with nothing recorded. */
  refusal(message: string, invalidRows = false): ImportRefused {
    return new ImportRefused(message, this.result(), invalidRows);
  }
}
