import { storedState } from "../campaigns/state.js";
import { importWasCutShort } from "../campaigns/unfinished-import.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CampaignMeta, StoredState } from "../ledger/types.js";
import { compareDecimal } from "../money.js";
import {
  type Budget,
  budgetText,
  type CurrencyBudget,
  resolveBudgets,
  unitsText,
} from "../orders/budget.js";
import type { JournalVerdict } from "../orders/journal-index.js";
import { plural } from "../plural.js";
import { accountBalance } from "./account-balance.js";
import { ImportRefused } from "./import-errors.js";
import type { RecordingOptions } from "./import-stages.js";
import type { ImportPlan, Survey } from "./import-survey.js";
import type { ImportDeps, ImportResult } from "./import-types.js";
import { journalRefusal } from "./journal-checks.js";

/** The campaign as pass 1 left it: undefined when new. */
export interface Existing {
  meta: CampaignMeta;
  state: StoredState;
  rows: number;
}

export async function existingCampaign(
  ledger: Ledger,
  campaign: string,
): Promise<Existing | undefined> {
  if (!(await ledger.campaigns.exists(campaign))) return undefined;
  const [meta, counts] = await Promise.all([
    ledger.campaigns.meta(campaign),
    ledger.campaigns.counts(campaign),
  ]);
  return { meta, state: storedState(meta), rows: counts.total };
}

/** What a check between the passes looks at: pass 1's survey, the campaign, how to refuse. */
export interface CampaignCheck {
  survey: Survey;
  existing: Existing | undefined;
  refuse: (message: string) => ImportRefused;
}

/**
 * Whether the new rows may go into the campaign as it stands and as its journal tells it (a
 * cancelled or archived campaign, one that exists without --append, rows the journal ties to
 * others); returns the journal's verdict, for the warning before pass 2.
 */
export async function checkCampaign(
  ledger: Ledger,
  checked: Pick<RecordingOptions, "campaign" | "append"> & CampaignCheck & { plan: ImportPlan },
): Promise<JournalVerdict | undefined> {
  const { campaign, append, survey, existing, plan, refuse } = checked;
  // Pass 1 took every row for new: another import made the campaign while this one read.
  if (plan.newCampaign && existing)
    throw refuse(
      `campaign ${campaign} was created by another import while this one read the file; nothing was enqueued: import the file again${append ? "" : " with --append"} to add the rows it does not have`,
    );
  if (existing?.state === "cancelled" || existing?.state === "archived")
    throw refuse(closedText(campaign, existing.state));
  // The same import again after one cut short records the rest without --append.
  if (existing && survey.freshRows > 0 && !append && !(await importWasCutShort(ledger, campaign)))
    throw refuse(
      `campaign ${campaign} exists (${existing.rows} ${plural(existing.rows, "row")}); this file has ${survey.freshRows} new ${plural(survey.freshRows, "row")}: pass --append to add them to it (the rows it has are not added again)`,
    );
  const verdict = plan.journal?.verdict();
  if (verdict) {
    const refusal = journalRefusal(verdict, {
      mode: plan.mode,
      campaign,
      path: plan.journal!.path,
    });
    if (refusal) throw refuse(refusal);
  }
  return verdict;
}

/**
 * The budgets of this import: those given (replacing the stored ones of their currencies) over
 * those stored on the campaign. When the campaign has any, every currency of the file needs
 * one, and in each the price recorded plus the new rows' must stay within it.
 */
export function checkBudgets(
  checked: CampaignCheck & { campaign: string; budgets: readonly Budget[] },
): { store: Map<string, CurrencyBudget>; replaced: ImportResult["budgets_replaced"] } {
  const { campaign, budgets, survey, existing, refuse } = checked;
  const currencies = survey.totals.currencies();
  let given: Map<string, CurrencyBudget>;
  try {
    given = resolveBudgets(budgets, currencies);
  } catch (error) {
    if (error instanceof UserError) throw refuse(error.message);
    throw error;
  }
  const meta = (existing?.meta ?? {}) as Record<string, string | undefined>;
  const stored = new Map<string, bigint>();
  for (const [field, value] of Object.entries(meta)) {
    const match = /^budget:([A-Z]{3})$/.exec(field);
    if (match && value !== undefined) stored.set(match[1]!, BigInt(value));
  }
  const replaced: { currency: string; from: string; to: string }[] = [];
  for (const [currency, budget] of given) {
    const before = stored.get(currency);
    if (before !== undefined && before !== budget.units)
      replaced.push({
        currency,
        from: unitsText(before, currency),
        to: unitsText(budget.units, currency),
      });
  }
  if (given.size === 0 && stored.size === 0) return { store: given, replaced };
  for (const currency of currencies) {
    const flag = given.get(currency);
    const limit = flag?.units ?? stored.get(currency);
    if (limit === undefined) {
      const named = given.size > 0 ? "no --budget is given" : `campaign ${campaign} has no budget`;
      throw refuse(
        `the file pays in ${currency} but ${named} for it: pass --budget AMOUNT:${currency}`,
      );
    }
    const planned = BigInt(meta[`planned_price:${currency}`] ?? "0");
    const total = planned + survey.newTotals.priceUnits(currency);
    if (total > limit) {
      const which = flag
        ? budgetText({ amount: flag.amount, currency })
        : `the campaign's ${currency} budget ${unitsText(limit, currency)}`;
      const parts =
        planned > 0n
          ? ` (${unitsText(planned, currency)} recorded before, ${unitsText(total - planned, currency)} new)`
          : "";
      throw refuse(
        `${which}: the campaign costs ${unitsText(total, currency)} ${currency}${parts}; nothing was enqueued`,
      );
    }
  }
  return { store: given, replaced };
}

/** Where GET /v2/balance answers, a campaign whose new rows cost more than the balance is refused. */
export async function checkBalance(
  deps: ImportDeps,
  survey: Survey,
  refused: ImportResult,
): Promise<void> {
  for (const currency of survey.newTotals.currencies()) {
    const balance = await accountBalance(deps.client!, currency, deps.log);
    if (balance === undefined) continue;
    const need = survey.newTotals.toJSON()[currency]!.price;
    if (compareDecimal(need, balance) > 0) {
      throw new ImportRefused(
        `the new rows cost ${need} ${currency} but the balance is ${balance} ${currency}; nothing was enqueued (--no-balance-check to skip)`,
        refused,
      );
    }
  }
}

/** Why no rows can be added to a cancelled or archived campaign, and what to do instead. */
export function closedText(campaign: string, state: string): string {
  const instead =
    state === "archived"
      ? `\`giftjobs orders restore --campaign ${campaign}\` brings it back, then import with --append`
      : "a cancelled campaign stays cancelled; to pay its rows after all, import them under a new name (rows it paid are refused as repeats)";
  return `campaign ${campaign} is ${state}: no rows can be added to it; ${instead}`;
}
