import { RepeatFinder } from "../campaigns/earlier-payments.js";
import { forgetBegun, forgottenRefusal } from "../campaigns/forget-records.js";
import { storedState } from "../campaigns/state.js";
import { sha256OfFile } from "../catalog/file-snapshot.js";
import { limitDay } from "../daily-limit.js";
import { UserError } from "../errors/user-error.js";
import { CAMPAIGN_NAME } from "../ledger/ledger.js";
import { checkBudgetFlags } from "../orders/budget.js";
import { checkItemsPerOrder, OrderPacker } from "../orders/packing.js";
import type { PaidMemory } from "../orders/paid-memory.js";
import { checkCampaignName } from "./campaign-names.js";
import { dailyLimitNotes } from "./daily-limit-note.js";
import { importerDayPassed, thresholdPassed } from "./four-eyes-hold.js";
import {
  checkBalance,
  checkBudgets,
  checkCampaign,
  closedText,
  type Existing,
  existingCampaign,
} from "./import-checks.js";
import { ImportDeclined, ImportRefused, invalidRowsText, RecordRefused } from "./import-errors.js";
import { type ImportOptions, importStages } from "./import-flags.js";
import { type Decided, type PassTwo, recordCampaign } from "./import-recording.js";
import { holdingOf, ImportReport } from "./import-report.js";
import { type ImportStages, importerOf, type RecordingOptions } from "./import-stages.js";
import { type ImportPlan, type RepeatCheck, type Survey, surveyFile } from "./import-survey.js";
import type { ImportDeps, ImportResult } from "./import-types.js";
import { InvalidRowsFile } from "./invalid-rows-file.js";
import { regularFileSize } from "./readers/order-input.js";
import { RepeatGroups, repeatLine } from "./repeats.js";
import { RowSpool } from "./row-spool.js";
import { priceSurvey } from "./service-prices.js";

/**
 * Imports an order file into a campaign: validate every row (pass 1), then record the ledger
 * and enqueue the new orders (pass 2). Strict by default: one invalid row and nothing is
 * written. A re-import adds nothing for rows already known.
 */
export async function importCampaign(
  options: ImportOptions,
  deps: ImportDeps,
): Promise<ImportResult> {
  return importStaged(importStages(options), deps);
}

/**
 * The import, its flags turned into each stage's own values (import-stages.ts): what `orders
 * import` calls with the values its schema parsed (import-flags.ts).
 */
export async function importStaged(stages: ImportStages, deps: ImportDeps): Promise<ImportResult> {
  const { recording, run } = stages;
  const { campaign } = recording;
  if (!CAMPAIGN_NAME.test(campaign)) {
    throw new UserError(
      `--campaign ${JSON.stringify(campaign)}: use letters, digits, '.', '_' or '-' (at most 100)`,
    );
  }
  checkBudgetFlags(stages.pricing.budgets);
  const memory = deps.stores.paidMemory;
  await checkName(recording, deps, memory);
  const mode = recording.executionMode;
  const itemsPerOrder = checkItemsPerOrder(recording.itemsPerOrder, mode);
  const packer = itemsPerOrder > 1 ? new OrderPacker(itemsPerOrder) : undefined;
  const journal = await deps.stores.journal.load(campaign);
  const newCampaign = !(await deps.ledger.campaigns.exists(campaign));
  const invalidFile =
    run.skipInvalid && run.errorFile && !run.dryRun
      ? new InvalidRowsFile(run.errorFile, deps.catalog)
      : undefined;

  // Stops the file's hash when the import ends: a refused file is read no further.
  const hashing = new AbortController();
  const file = stages.read.file;
  const repeats =
    memory && (await repeatCheck(recording, deps, { file, signal: hashing.signal, memory }));
  let spool: RowSpool | undefined;
  try {
    spool = run.dryRun ? undefined : await RowSpool.create();
    // Before a row is read: an error file that cannot be written stops the import at once.
    await invalidFile?.open();
    return await importWithSpool(stages, deps, {
      mode,
      itemsPerOrder,
      packer,
      journal,
      invalidFile,
      spool,
      repeats,
      newCampaign,
    });
  } catch (error) {
    // Stopped before the error file was put in place (a file refused half way, Redis gone):
    // no half-written error file is left behind. A no-op once it is in place.
    await invalidFile?.discard();
    throw error;
  } finally {
    hashing.abort();
    await spool?.close();
    // Pass 1 releases it when it ends; here when it did not (an error, a signal).
    await repeats?.finder.release();
  }
}

/** The import once its spool is open: pass 1, the checks that may refuse it, pass 2. */
async function importWithSpool(
  stages: ImportStages,
  deps: ImportDeps,
  plan: ImportPlan,
): Promise<ImportResult> {
  const survey = await passOne(stages, deps, plan);
  const existing = await existingCampaign(deps.ledger, stages.recording.campaign);
  const report = new ImportReport(
    stages.recording.campaign,
    survey,
    { dryRun: stages.run.dryRun, errorFile: plan.invalidFile ? stages.run.errorFile : undefined },
    holdingOf(stages.recording.hold, existing, survey),
  );
  await refuseRowsOrRepeats(stages.run, plan, report);
  let decided: Decided;
  try {
    decided = await checkBetweenPasses(stages, deps, { plan, report, existing });
    if (!plan.spool) return report.result();
    await askToRecord(stages.run, report, existing);
    // The audit entry, durable before the campaign or a row of it is recorded.
    await stages.run.beforeRecording?.(report.result(survey.newRows, 0));
  } catch (error) {
    // Nothing recorded: the rows leave their importer's day. Should that fail too (Redis gone),
    // the day counts them still, which can only hold a later import, never let one through.
    await report.importerDay?.giveBack().catch(() => {});
    throw error;
  }
  return passTwo(stages, deps, { plan: { ...plan, spool: plan.spool }, report, decided });
}

/**
 * Pass 1 over the catalog as it stands now: the product states the service pushed since the
 * snapshot was synced (`product.update`, in Redis), read as the import starts: a product made
 * unorderable is refused, a changed multiplier prices the rows (and so the budget check),
 * changed denominations check them.
 */
async function passOne(stages: ImportStages, deps: ImportDeps, plan: ImportPlan): Promise<Survey> {
  const catalog =
    deps.catalog && (await deps.stores.productOverrides(deps.ledger).applyTo(deps.catalog));
  const { recording, read, header, validation, run } = stages;
  const survey = await surveyFile(
    { campaign: recording.campaign, read, header, validation, onProgress: run.onProgress },
    { ...deps, catalog },
    plan,
  );
  // Every row is looked up: the other campaigns' entries are not held through pass 2.
  await plan.repeats?.finder.release();
  return survey;
}

/**
 * Invalid rows refuse a strict import; rows paid before by other campaigns refuse one that
 * neither allows nor skips them. The error file is put in place (or discarded) first.
 */
async function refuseRowsOrRepeats(
  run: ImportStages["run"],
  plan: ImportPlan,
  report: ImportReport,
): Promise<void> {
  const { survey } = report;
  if (survey.errorCount > 0 && !run.skipInvalid)
    throw report.refusal(
      `${invalidRowsText(survey.invalidRows, survey.errorCount)}; nothing was enqueued`,
      true,
    );
  const refused = (await repeatsFound(survey, plan)) && plan.repeats?.choice === "refuse";
  await plan.invalidFile?.commit(survey.errorCount > 0 || refused);
  if (refused) throw report.refusal(repeatsRefusal(survey));
}

/**
 * The checks between the passes, in order (docs/architecture/import.md, "Approval, appending and
 * budgets"): the campaign and its journal, the service's prices (what is shown, checked and
 * recorded from here), the four-eyes hold, the budgets, the daily limit, the balance.
 */
async function checkBetweenPasses(
  { recording, pricing: limits, run }: ImportStages,
  deps: ImportDeps,
  { plan, report, existing }: { plan: ImportPlan; report: ImportReport; existing?: Existing },
): Promise<Decided> {
  const { campaign, survey } = report;
  const refuse = (message: string) => report.refusal(message);
  const checked = { survey, existing, refuse };
  const verdict = await checkCampaign(deps.ledger, { ...recording, ...checked, plan });
  report.pricing = await priceSurvey(survey, deps);
  // Four eyes: a price over GIFTJOBS_APPROVAL_THRESHOLD holds the campaign, as --hold does; so
  // do new rows that take their importer's day over it, whatever campaigns it was spread over.
  report.importerDay = await importerDayPassed(survey, {
    threshold: limits.approvalThreshold,
    importer: importerDay(recording, limits, deps),
    count: !run.dryRun,
  });
  report.fourEyes =
    thresholdPassed(limits.approvalThreshold, survey, existing) ?? report.importerDay.rule;
  if (report.fourEyes) report.holding = holdingOf(true, existing, survey);
  const budgets = checkBudgets({ ...checked, campaign, budgets: limits.budgets });
  report.budgetsReplaced = budgets.replaced;
  report.limitNotes = await dailyLimitNotes(deps.ledger, {
    limit: limits.dailyLimit,
    totals: survey.newTotals,
  });
  if (limits.balanceCheck && deps.client && !run.dryRun)
    await checkBalance(deps, survey, report.result());
  const { holdNow, state } = report.holding;
  return {
    holdNow,
    existing,
    budgets: budgets.store,
    verdict,
    heldAfter: state === "held",
    fourEyes: report.fourEyes,
  };
}

/**
 * Who imports and on which day, for the four-eyes rule across campaigns: the day of
 * GIFTJOBS_LIMIT_TZ when a daily limit is set, else of UTC, as the day's spend is counted.
 */
function importerDay(
  recording: ImportStages["recording"],
  limits: ImportStages["pricing"],
  deps: ImportDeps,
) {
  const name = importerOf(recording);
  const day = limitDay(new Date(), limits.dailyLimit?.tz ?? "UTC");
  return { name, day, today: deps.ledger.importedToday };
}

/** The operator's yes to the new rows, when the run asks (a terminal's question). */
async function askToRecord(
  run: ImportStages["run"],
  report: ImportReport,
  existing: Existing | undefined,
): Promise<void> {
  const { campaign, survey, pricing, limitNotes } = report;
  if (survey.newRows === 0 || !run.confirm) return;
  const yes = await run.confirm({
    campaign,
    rows: survey.newRows,
    totals: survey.newTotals.toJSON(),
    pricing,
    ...(existing ? { existing: { state: existing.state, rows: existing.rows } } : {}),
    held: report.holding.state === "held",
    ...(survey.repeats && survey.repeats.rows > 0 ? { repeats: survey.repeats.list() } : {}),
    ...(limitNotes.length > 0 ? { dailyLimit: limitNotes } : {}),
  });
  if (!yes) throw new ImportDeclined(report.result());
}

/** Pass 2 (import-recording.ts), then the file noted for the repeats check; the answer. */
async function passTwo(
  { recording, run }: ImportStages,
  deps: ImportDeps,
  { plan, report, decided }: Pick<PassTwo, "plan" | "decided"> & { report: ImportReport },
): Promise<ImportResult> {
  const { campaign, survey } = report;
  let written: { rows: number; orders: number };
  try {
    const hold = report.holding.hold;
    written = await recordCampaign(deps, {
      recording: { ...recording, hold },
      onProgress: run.onProgress,
      survey,
      plan,
      decided,
    });
    if (plan.repeats && written.rows > 0) await recordFile(plan.repeats, campaign, written.rows);
  } catch (error) {
    if (!(error instanceof RecordRefused)) throw error;
    throw new ImportRefused(error.message, report.result(error.rows, error.orders));
  }
  deps.log.info(
    { campaign, new_rows: written.rows, orders: written.orders, already_known: survey.known },
    `${written.rows} new, ${survey.known} already known`,
  );
  const after = storedState(await deps.ledger.campaigns.meta(campaign));
  return { ...report.result(written.rows, written.orders), state: after };
}

/**
 * The name's checks (src/import/campaign-names.ts) against every campaign Redis or the paid
 * memory knows, and the campaign's state: a cancelled or archived one takes no rows.
 */
async function checkName(
  { campaign, append }: Pick<RecordingOptions, "campaign" | "append">,
  deps: ImportDeps,
  memory: PaidMemory | undefined,
): Promise<void> {
  const known = new Set(await deps.ledger.campaigns.names());
  for (const name of (await memory?.campaigns()) ?? []) known.add(name);
  checkCampaignName(campaign, append, [...known]);
  if (!(await deps.ledger.campaigns.exists(campaign))) return;
  const meta = await deps.ledger.campaigns.meta(campaign);
  const state = storedState(meta);
  if (state === "cancelled" || state === "archived")
    throw new UserError(closedText(campaign, state));
  if (forgetBegun(meta)) throw new UserError(forgottenRefusal(campaign, "imported into"));
}

/** The check of this import's rows against other campaigns' (docs/architecture/repeats.md). */
async function repeatCheck(
  { campaign, repeats: choice, repeatWindowDays }: RecordingOptions,
  deps: ImportDeps,
  { file, signal, memory }: { file: string; signal: AbortSignal; memory: PaidMemory },
): Promise<RepeatCheck> {
  const since = Date.now() - repeatWindowDays * 86_400_000;
  const lookup = await memory.lookup(campaign, since);
  const outcome = choice === "refuse" ? "refused" : choice === "skip" ? "skipped" : "allowed";
  return {
    finder: new RepeatFinder(lookup, deps.ledger, deps.stores.dataDir),
    choice,
    groups: new RepeatGroups(outcome),
    memory,
    since,
    // The file's bytes, read beside pass 1: the same file under another name is named so.
    fileHash: regularFileHash(file, signal),
  };
}

/**
 * sha256 of a regular file, read beside pass 1; none for a pipe or a device (`<(...)`,
 * /dev/stdin), whose bytes a second reader would take from the import's own.
 */
async function regularFileHash(file: string, signal: AbortSignal): Promise<string | undefined> {
  if ((await regularFileSize(file)) === undefined) return undefined;
  return sha256OfFile(file, signal).catch(() => undefined);
}

/** Whether pass 1 found repeated rows; when it did, notes the campaigns this very file went to. */
async function repeatsFound(survey: Survey, { repeats }: ImportPlan): Promise<boolean> {
  survey.repeats = repeats?.groups;
  if (!repeats || repeats.groups.rows === 0) return false;
  const hash = await repeats.fileHash;
  if (hash) repeats.groups.sameFile(await repeats.memory.filesLike(hash, "", repeats.since));
  return true;
}

/**
 * The refusal of repeated rows: one line per earlier campaign, the last saying that nothing was
 * recorded and how to record the other rows only.
 */
function repeatsRefusal(survey: Survey): string {
  const lines = survey
    .repeats!.list()
    .map((g) => `${repeatLine(g)}: pass --allow-repeats to pay them again`);
  lines[lines.length - 1] += "; nothing was recorded (--skip-repeats records the other rows only)";
  return lines.join("\n");
}

async function recordFile(repeats: RepeatCheck, campaign: string, rows: number): Promise<void> {
  const hash = await repeats.fileHash;
  if (hash) await repeats.memory.recordFile(campaign, hash, rows);
}
