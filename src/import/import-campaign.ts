import type { JobsOptions } from "bullmq";
import type { ApiClient } from "../api/client.js";
import type { ExecutionMode } from "../api/order-request.js";
import { storedState } from "../campaigns/state.js";
import { importWasCutShort, recordingMarked } from "../campaigns/unfinished-import.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import { RunError } from "../errors/runtime-error.js";
import { UserError } from "../errors/user-error.js";
import { samePayload } from "../ledger/codec.js";
import { CAMPAIGN_NAME, type Ledger, type LedgerOrder, type LedgerRow } from "../ledger/ledger.js";
import { BudgetExceededError, CampaignClosedError } from "../ledger/orders.js";
import type { CampaignMeta, NewOrder, StoredState } from "../ledger/types.js";
import type { Logger } from "../log.js";
import { compareDecimal } from "../money.js";
import {
  type Budget,
  budgetText,
  type CurrencyBudget,
  checkBudgetFlags,
  resolveBudgets,
  unitsText,
} from "../orders/budget.js";
import { OccurrenceCounter, payloadHash, rowIdentity } from "../orders/identity.js";
import { type JournalLine, journalPath, OrderJournalWriter } from "../orders/journal.js";
import { JournalIndex } from "../orders/journal-index.js";
import { orderKey } from "../orders/keys.js";
import type { OrderRow } from "../orders/order-row.js";
import { checkItemsPerOrder, OrderPacker } from "../orders/packing.js";
import { buildOrderRequest } from "../orders/request.js";
import { CampaignTotals, type CurrencyTotal } from "../orders/totals.js";
import { accountBalance } from "./account-balance.js";
import { InvalidRowsFile } from "./invalid-rows-file.js";
import { journalRefusal, journalWarning, repackFromSpool } from "./journal-checks.js";
import type { CsvItem, ReadOrderRowsOptions } from "./readers/csv-rows.js";
import { readOrderFile } from "./readers/order-file.js";
import { RowSpool, type SpoolEntry, type SpooledRow } from "./row-spool.js";
import { PreflightMemo } from "./validation/preflight.js";
import { ReferenceTracker } from "./validation/reference-tracker.js";
import type { RowError } from "./validation/row-error.js";
import { type ValidateRowOptions, validateRow } from "./validation/row-validation.js";

/** Options of `orders import`. */
export interface ImportOptions {
  file: string;
  campaign: string;
  /**
   * face_value uses ',' as its decimal mark. Unset: for a ';'-separated file (as spreadsheets
   * export them where ',' is the decimal mark) a ',' value is read as one, and
   * `onDecimalComma` says so; a '.' value still reads as it always did.
   */
  decimalComma?: boolean;
  /** Told once, at the first face_value read with a decimal comma, whether that was assumed. */
  onDecimalComma?: (assumed: boolean) => void;
  /** Everything but the ledger and the queue. @defaultValue false */
  dryRun?: boolean;
  /** Enqueue the valid rows; write the invalid ones to `errorFile`. @defaultValue false */
  skipInvalid?: boolean;
  /** Where invalid rows go with --skip-invalid. */
  errorFile?: string;
  /**
   * At most one per currency; a budget without a currency only alone, for a file of one
   * currency. Stored on the campaign (`budget:CUR`), replacing its budget in that currency;
   * with none, the campaign's stored budgets apply. Checked against what the campaign has
   * recorded plus the new rows, in pass 1 and again atomically as each batch is recorded.
   */
  budgets?: readonly Budget[];
  /** @defaultValue "async" */
  executionMode?: ExecutionMode;
  /** @defaultValue 1 */
  itemsPerOrder?: number;
  defaultTemplateId?: string;
  map?: Record<string, string>;
  /** `strictColumns` and `onHeader` of the CSV reader. */
  header?: Pick<ReadOrderRowsOptions, "strictColumns" | "onHeader">;
  delimiter?: string;
  /** The sheet of an .xlsx workbook. @defaultValue its first sheet */
  sheet?: string;
  /**
   * The most an .xlsx workbook's entries may unpack to, together (`--max-unzipped-mb`); given,
   * their ratio to their packed size is not checked. @defaultValue 200 MB, and that ratio
   * (docs/architecture.md, "Spreadsheets")
   */
  maxUnzippedBytes?: number;
  /** Payment currency when there is no catalog check. */
  currency?: string;
  /** Refuse a campaign over the account balance where the service tells it. @defaultValue true */
  balanceCheck?: boolean;
  /**
   * Attempts and backoff of the order jobs, recorded on a new campaign for the dispatcher.
   * @defaultValue ORDER_JOB_OPTIONS
   */
  jobOptions?: Pick<JobsOptions, "attempts" | "backoff">;
  /**
   * Record the campaign as held: nothing is sent until `orders approve`. A running or paused
   * campaign that gets new rows becomes held. @defaultValue false
   */
  hold?: boolean;
  /**
   * Allow new rows into a campaign that exists; without it such an import is refused. Rows
   * already known (a re-run) and changed rows released from a final failure need no append.
   * @defaultValue false
   */
  append?: boolean;
  /**
   * Asked after pass 1 (every check passed) and before anything is recorded, when there are new
   * rows to record (not on a dry run). False: nothing is recorded, ImportDeclined is thrown.
   */
  confirm?: (plan: SpendPlan) => Promise<boolean>;
  /** Called as rows are read and enqueued. */
  onProgress?: (progress: ImportProgress) => void;
}

/** Where an import is: for a progress bar. */
export interface ImportProgress {
  phase: "validate" | "enqueue";
  /** Rows read so far. */
  rows: number;
  /** Bytes of the file parsed so far (validate: the bar's position in the file). */
  bytes: number;
  /** Rows recorded so far (enqueue). */
  enqueued: number;
  /** Rows there are to record (enqueue: the bar's total). */
  toEnqueue: number;
}

export interface ImportDeps {
  ledger: Ledger;
  /** The current catalog snapshot's index; undefined with --no-catalog-check. */
  catalog: CatalogIndex | undefined;
  /** For the balance check; none skips it. */
  client?: ApiClient;
  log: Logger;
  /**
   * The data dir (`GIFTJOBS_DATA_DIR`): the campaign's order journal is kept in
   * `campaigns/NAME/orders.ndjson` under it, and read by every import, so that a re-import after
   * a lost ledger packs rows into the orders, and keys, they had (docs/architecture.md, "Lost
   * ledger"). None: no journal is kept or read.
   */
  dataDir?: string;
}

/** What an import is about to record and spend, for `confirm`. */
export interface SpendPlan {
  campaign: string;
  /** New rows to record (released changed rows included). */
  rows: number;
  /** The new rows' face value and price per currency. */
  totals: Record<string, CurrencyTotal>;
  /** The campaign before this import; undefined when it is new. */
  existing?: { state: StoredState; rows: number };
  /** The campaign will be held after the import (nothing sent until approved). */
  held: boolean;
}

/** `orders import --json`. */
export interface ImportResult {
  campaign: string;
  rows: number;
  valid: number;
  invalid: number;
  enqueued: number;
  already_known: number;
  orders: number;
  totals: Record<string, CurrencyTotal>;
  errors: RowError[];
  /** Errors beyond the first 100 listed. */
  more_errors: number;
  error_file?: string;
  dry_run: boolean;
  /**
   * The campaign's state after the import (on a dry run: what it would be); undefined when the
   * import was refused before any state was known.
   */
  state?: StoredState;
  /** Stored budgets this import replaced (amounts at the currency's scale). */
  budgets_replaced?: { currency: string; from: string; to: string }[];
}

/** Thrown when the import is refused (invalid rows in strict mode, budget, balance, conflicts): exit 2. */
export class ImportRefused extends UserError {
  override readonly name = "ImportRefused";
  constructor(
    message: string,
    readonly result: ImportResult,
    /** Refused for its invalid rows: `result.errors` says why. Otherwise the message does. */
    readonly forRows = false,
  ) {
    super(message);
  }
}

/** The confirm callback answered no: nothing was recorded (exit 1). */
export class ImportDeclined extends RunError {
  override readonly name = "ImportDeclined";
  constructor(readonly result: ImportResult) {
    super(`campaign ${result.campaign}: not confirmed; nothing was recorded`);
  }
}

const ERRORS_LISTED = 100;
const BATCH = 500;

/** A valid row on its way to the ledger. */
interface PlannedRow {
  row: OrderRow;
  /** The row as read, for the error file should the ledger refuse it. */
  item: CsvItem;
  identity: string;
  payload: string;
  currency: string;
  faceUnits: bigint;
  priceUnits: bigint;
}

/** What pass 1 learned: counts, totals, errors, and for packing the new rows' identities. */
class Survey {
  rows = 0;
  /** Bytes of the file parsed so far. */
  bytes = 0;
  valid = 0;
  newRows = 0;
  /** New rows whose identity the ledger did not know (not released ones). */
  freshRows = 0;
  known = 0;
  errorCount = 0;
  readonly errors: RowError[] = [];
  readonly totals = new CampaignTotals();
  readonly newTotals = new CampaignTotals();
  /** Rows released from a final failure: identity -> next generation. */
  readonly released = new Map<string, number>();
  addError(error: RowError): void {
    this.errorCount += 1;
    if (this.errors.length < ERRORS_LISTED) this.errors.push(error);
  }
}

/**
 * Imports an order file into a campaign: validate every row (pass 1), then record the ledger
 * and enqueue the new orders (pass 2). Strict by default: one invalid row and nothing is
 * written. A re-import adds nothing for rows already known.
 */
export async function importCampaign(
  options: ImportOptions,
  deps: ImportDeps,
): Promise<ImportResult> {
  if (!CAMPAIGN_NAME.test(options.campaign)) {
    throw new UserError(
      `--campaign ${JSON.stringify(options.campaign)}: use letters, digits, '.', '_' or '-' (at most 100)`,
    );
  }
  checkBudgetFlags(options.budgets ?? []);
  if (await deps.ledger.exists(options.campaign)) {
    const state = storedState(await deps.ledger.meta(options.campaign));
    if (state === "cancelled" || state === "archived")
      throw new UserError(
        `campaign ${options.campaign} is ${state}: no rows can be added to it; import under another name`,
      );
  }
  const mode = options.executionMode ?? "async";
  const itemsPerOrder = checkItemsPerOrder(options.itemsPerOrder, mode);
  const packer = itemsPerOrder > 1 ? new OrderPacker(itemsPerOrder) : undefined;
  const journal = deps.dataDir
    ? await JournalIndex.load(journalPath(deps.dataDir, options.campaign), options.campaign)
    : undefined;
  const invalidFile =
    options.skipInvalid && options.errorFile && !options.dryRun
      ? new InvalidRowsFile(options.errorFile)
      : undefined;

  const spool = options.dryRun ? undefined : await RowSpool.create();
  try {
    // Before a row is read: an error file that cannot be written stops the import at once.
    await invalidFile?.open();
    return await importWithSpool(options, deps, {
      mode,
      itemsPerOrder,
      packer,
      journal,
      invalidFile,
      spool,
    });
  } catch (error) {
    // Stopped before the error file was put in place (a file refused half way, Redis gone):
    // no half-written error file is left behind. A no-op once it is in place.
    await invalidFile?.discard();
    throw error;
  } finally {
    await spool?.close();
  }
}

/** The campaign as pass 1 left it: undefined when new. */
interface Existing {
  meta: CampaignMeta;
  state: StoredState;
  rows: number;
}

/** The import once its spool is open: pass 1, the checks that may refuse it, pass 2. */
async function importWithSpool(
  options: ImportOptions,
  deps: ImportDeps,
  plan: ImportPlan,
): Promise<ImportResult> {
  const { mode, itemsPerOrder, invalidFile, spool } = plan;
  const survey = await surveyFile(options, deps, plan);
  const existing = await existingCampaign(deps.ledger, options.campaign);
  const holdNow = Boolean(options.hold) && (!existing || survey.newRows > 0);
  const state: StoredState | undefined =
    holdNow && existing?.state !== "cancelled" && existing?.state !== "archived"
      ? "held"
      : (existing?.state ?? "running");
  let budgetsReplaced: ImportResult["budgets_replaced"];
  const result = (enqueued: number, orders: number): ImportResult => ({
    campaign: options.campaign,
    rows: survey.rows,
    valid: survey.valid,
    invalid: survey.rows - survey.valid,
    enqueued,
    already_known: survey.known,
    orders,
    totals: survey.totals.toJSON(),
    errors: [...survey.errors].sort((a, b) => a.line - b.line),
    more_errors: Math.max(0, survey.errorCount - survey.errors.length),
    error_file: invalidFile && survey.errorCount > 0 ? options.errorFile : undefined,
    dry_run: options.dryRun ?? false,
    state,
    ...(budgetsReplaced?.length ? { budgets_replaced: budgetsReplaced } : {}),
  });

  if (survey.errorCount > 0 && !options.skipInvalid) {
    throw new ImportRefused(
      `${survey.errorCount} invalid row(s); nothing was enqueued`,
      result(0, 0),
      true,
    );
  }
  await invalidFile?.commit(survey.errorCount > 0);
  const refuse = (message: string) => new ImportRefused(message, result(0, 0));
  if (existing?.state === "cancelled" || existing?.state === "archived")
    throw refuse(
      `campaign ${options.campaign} is ${existing.state}: no rows can be added to it; import under another name`,
    );
  // The same import again after one cut short records the rest without --append.
  if (
    existing &&
    survey.freshRows > 0 &&
    !options.append &&
    !(await importWasCutShort(deps.ledger, options.campaign))
  )
    throw refuse(
      `campaign ${options.campaign} exists (${existing.rows} rows); this file has ${survey.freshRows} new rows: pass --append to add them to it, or import under another name`,
    );
  const verdict = plan.journal?.verdict();
  if (verdict) {
    const refusal = journalRefusal(verdict, mode, options.campaign, plan.journal!.path);
    if (refusal) throw refuse(refusal);
  }
  const budgets = checkBudgets(options, survey, existing, refuse);
  budgetsReplaced = budgets.replaced;
  if (options.balanceCheck !== false && deps.client && !options.dryRun)
    await checkBalance(deps, survey, result(0, 0));
  if (!spool) return result(0, 0);

  if (survey.newRows > 0 && options.confirm) {
    const yes = await options.confirm({
      campaign: options.campaign,
      rows: survey.newRows,
      totals: survey.newTotals.toJSON(),
      ...(existing ? { existing: { state: existing.state, rows: existing.rows } } : {}),
      held: state === "held",
    });
    if (!yes) throw new ImportDeclined(result(0, 0));
  }

  await deps.ledger.register(options.campaign, {
    execution_mode: mode,
    items_per_order: String(itemsPerOrder),
    state: options.hold ? "held" : "running",
    ...(options.hold ? {} : { approved_at: new Date().toISOString() }),
    ...(options.jobOptions ? { job_options: retryPolicy(options.jobOptions) } : {}),
  });
  // Held before a new row is recorded: the dispatcher never sees them in a running campaign.
  if (holdNow && existing)
    await deps.ledger.setState(options.campaign, "held", ["running", "paused"]);
  // Stored before the rows: RECORD checks each batch against it.
  if (budgets.store.size > 0)
    await deps.ledger.setMeta(
      options.campaign,
      Object.fromEntries([...budgets.store].map(([c, b]) => [`budget:${c}`, String(b.units)])),
    );
  const warning = verdict && journalWarning(verdict, options.campaign, plan.journal!.path);
  if (warning) deps.log.warn({ campaign: options.campaign }, warning);
  let written: { rows: number; orders: number };
  try {
    written = await recordingMarked(deps.ledger, options.campaign, () =>
      writeCampaign(options, deps, survey, { ...plan, spool }),
    );
  } catch (error) {
    if (!(error instanceof RecordRefused)) throw error;
    throw new ImportRefused(error.message, result(error.rows, error.orders));
  }
  deps.log.info(
    {
      campaign: options.campaign,
      new_rows: written.rows,
      orders: written.orders,
      already_known: survey.known,
    },
    `${written.rows} new, ${survey.known} already known`,
  );
  const after = storedState(await deps.ledger.meta(options.campaign));
  return { ...result(written.rows, written.orders), state: after };
}

async function existingCampaign(ledger: Ledger, campaign: string): Promise<Existing | undefined> {
  if (!(await ledger.exists(campaign))) return undefined;
  const [meta, counts] = await Promise.all([ledger.meta(campaign), ledger.counts(campaign)]);
  return { meta, state: storedState(meta), rows: counts.total };
}

/**
 * The budgets of this import: those given (replacing the stored ones of their currencies) over
 * those stored on the campaign. When the campaign has any, every currency of the file needs
 * one, and in each the price recorded plus the new rows' must stay within it.
 */
function checkBudgets(
  options: ImportOptions,
  survey: Survey,
  existing: Existing | undefined,
  refuse: (message: string) => ImportRefused,
): { store: Map<string, CurrencyBudget>; replaced: ImportResult["budgets_replaced"] } {
  const currencies = survey.totals.currencies();
  let given: Map<string, CurrencyBudget>;
  try {
    given = resolveBudgets(options.budgets ?? [], currencies);
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
      const named =
        given.size > 0 ? "no --budget is given" : `campaign ${options.campaign} has no budget`;
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

/** The attempts and backoff of a campaign's jobs, as recorded for the dispatcher. */
function retryPolicy({ attempts, backoff }: Pick<JobsOptions, "attempts" | "backoff">): string {
  return JSON.stringify({ attempts, backoff });
}

/**
 * Pass 1: read, validate, preflight, price, and classify each row against the ledger. What
 * pass 2 must write goes to the spool (none on a dry run).
 */
async function surveyFile(
  options: ImportOptions,
  deps: ImportDeps,
  plan: ImportPlan,
): Promise<Survey> {
  const survey = new Survey();
  const lookups = new OneAtATime();
  let batch: PlannedRow[] = [];
  for await (const planned of plannedRows(options, deps.catalog, survey, plan.invalidFile)) {
    batch.push(planned);
    if (batch.length < BATCH) continue;
    const full = batch;
    batch = [];
    await lookups.run(async () => {
      await classify(options.campaign, full, deps, survey, plan);
      options.onProgress?.({
        phase: "validate",
        rows: survey.rows,
        bytes: survey.bytes,
        enqueued: 0,
        toEnqueue: 0,
      });
    });
  }
  const last = batch;
  if (last.length) await lookups.run(() => classify(options.campaign, last, deps, survey, plan));
  await lookups.drain();
  return survey;
}

/**
 * Runs async steps one at a time, in order, while the caller goes on: the next batch is parsed
 * and validated while Redis answers for the previous one. `run` waits for the step before, so
 * at most one is in flight; a failure surfaces at the next `run` or at `drain`.
 */
class OneAtATime {
  private last: Promise<void> = Promise.resolve();
  async run(step: () => Promise<void>): Promise<void> {
    await this.last;
    const next = step();
    // Kept for the next run or drain; the catch only stops an "unhandled rejection" meanwhile.
    next.catch(() => {});
    this.last = next;
  }
  drain(): Promise<void> {
    return this.last;
  }
}

/** Valid rows with their identity, payload hash, currency and price; errors go to the survey. */
async function* plannedRows(
  options: ImportOptions,
  catalog: CatalogIndex | undefined,
  survey: Survey,
  invalidFile: InvalidRowsFile | undefined,
): AsyncGenerator<PlannedRow> {
  const references = new ReferenceTracker();
  const preflight = new PreflightMemo(catalog, { currency: options.currency });
  const occurrences = new OccurrenceCounter();
  const decimal = decimalCommaOf(options);
  for await (const item of readOrderFile(options.file, {
    delimiter: options.delimiter,
    sheet: options.sheet,
    maxUnzippedBytes: options.maxUnzippedBytes,
    map: options.map,
    ...options.header,
    onPosition: (bytes) => {
      survey.bytes = bytes;
    },
    onHeader: (header) => {
      invalidFile?.setHeader(header.names);
      options.header?.onHeader?.(header);
    },
  })) {
    survey.rows += 1;
    const outcome = checkItem(item, options, preflight, references, decimal);
    if ("errors" in outcome) {
      for (const error of outcome.errors) survey.addError(error);
      await invalidFile?.write(item, outcome.errors);
      continue;
    }
    yield {
      row: outcome.row,
      item,
      identity: rowIdentity(outcome.row, occurrences),
      payload: payloadHash(outcome.row),
      currency: outcome.currency,
      faceUnits: outcome.faceUnits,
      priceUnits: outcome.priceUnits,
    };
  }
}

/** Whether face values use a decimal comma (see ImportOptions.decimalComma); told once. */
function decimalCommaOf(
  options: ImportOptions,
): Pick<ValidateRowOptions, "decimalComma" | "onDecimalComma"> {
  const assumed = options.decimalComma === undefined && options.delimiter === ";";
  let told = false;
  return {
    decimalComma: options.decimalComma ?? (assumed ? "either" : false),
    onDecimalComma: () => {
      if (!told) options.onDecimalComma?.(assumed);
      told = true;
    },
  };
}

type CheckedItem =
  | { errors: RowError[] }
  | { row: OrderRow; currency: string; faceUnits: bigint; priceUnits: bigint };

function checkItem(
  item: CsvItem,
  options: ImportOptions,
  preflight: PreflightMemo,
  references: ReferenceTracker,
  decimal: Pick<ValidateRowOptions, "decimalComma" | "onDecimalComma">,
): CheckedItem {
  if (item.kind === "error") return { errors: [item.error] };
  const validation = validateRow(item, {
    defaultTemplateId: options.defaultTemplateId,
    references,
    ...decimal,
  });
  if (item.problems) {
    // A cell that could not be read (a formula, a date) was read as "": not "required" again.
    const unread = new Set(item.problems.map((p) => p.column));
    const others = validation.ok ? [] : validation.errors.filter((e) => !unread.has(e.column));
    return { errors: [...item.problems, ...others] };
  }
  if (!validation.ok) return { errors: validation.errors };
  const checked = preflight.check(validation.row);
  if (!checked.ok) return { errors: checked.errors };
  return {
    row: validation.row,
    currency: checked.currency,
    faceUnits: checked.faceUnits,
    priceUnits: checked.priceUnits,
  };
}

/** How this import runs, and where pass 1 sends what it decides besides the survey. */
interface ImportPlan {
  mode: ExecutionMode;
  itemsPerOrder: number;
  packer: OrderPacker | undefined;
  /** The campaign's order journal as read at the start; none without a data dir. */
  journal: JournalIndex | undefined;
  invalidFile: InvalidRowsFile | undefined;
  /** None on a dry run. */
  spool: RowSpool | undefined;
}

/**
 * Looks a batch up in the ledger: known with the same content -> already known (its job is
 * added again while its order is queued); known with changed content -> a conflict, unless its
 * order failed for good; unknown -> new.
 */
async function classify(
  campaign: string,
  batch: PlannedRow[],
  deps: ImportDeps,
  survey: Survey,
  { packer, journal, invalidFile, spool }: ImportPlan,
): Promise<void> {
  const recorded = await deps.ledger.getRows(
    campaign,
    batch.map((p) => p.identity),
  );
  const numbers = [
    ...new Set(recorded.filter((r): r is LedgerRow => r !== undefined).map((r) => r.order)),
  ];
  const orders = new Map(
    (await deps.ledger.getOrders(campaign, numbers)).map((o, i) => [numbers[i], o]),
  );
  const toWrite: SpoolEntry[] = [];
  for (const [i, planned] of batch.entries()) {
    const known = recorded[i];
    const order = known ? orders.get(known.order) : undefined;
    if (known && !samePayload(known.payload_hash, planned.payload)) {
      if (order?.status !== "failed_final") {
        // A conflict is an invalid row: not counted as valid, not in the totals, in the error file.
        const error = {
          line: planned.row.line,
          column: "reference",
          message: `row changed since line ${known.line} was imported under this reference (status ${order?.status ?? "unknown"}); refused: use a new reference for a new card`,
        };
        survey.addError(error);
        await invalidFile?.write(planned.item, [error]);
        continue;
      }
      // Its earlier order failed for good (nothing was made): the changed row may go, as the next generation.
      survey.released.set(planned.identity, known.generation + 1);
    }
    survey.valid += 1;
    survey.totals.add(planned.currency, planned.faceUnits, planned.priceUnits);
    // A row the journal names but the ledger does not know keeps the order it was recorded in.
    const journalLine = journal?.note(planned.identity, !known);
    if (known && !survey.released.has(planned.identity)) {
      // Recorded with its order on the pending list in one script: nothing to add again.
      survey.known += 1;
      continue;
    }
    survey.newRows += 1;
    if (!known) survey.freshRows += 1;
    survey.newTotals.add(planned.currency, planned.faceUnits, planned.priceUnits);
    if (known || journalLine === undefined)
      packer?.add(planned.identity, planned.currency, planned.row.send_at);
    const { identity, payload, currency, row } = planned;
    const face = String(planned.faceUnits);
    const price = String(planned.priceUnits);
    toWrite.push({ kind: "new", identity, payload, currency, face, price, row });
  }
  await spool?.write(toWrite);
}

/** Where GET /v2/balance answers, a campaign whose new rows cost more than the balance is refused. */
async function checkBalance(
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

/**
 * Pass 2: from the spool of pass 1, record the ledger, then add the jobs, a batch at a time.
 * Returns what was new.
 */
async function writeCampaign(
  options: ImportOptions,
  deps: ImportDeps,
  survey: Survey,
  { mode, packer, journal, spool }: ImportPlan & { spool: RowSpool },
): Promise<{ rows: number; orders: number }> {
  if (journal && packer) await repackFromSpool(spool, journal, survey.released, packer);
  const journalWriter = deps.dataDir
    ? new OrderJournalWriter(journalPath(deps.dataDir, options.campaign))
    : undefined;
  const writer = new CampaignWriter(options.campaign, deps, survey, mode, packer, {
    index: journal,
    writer: journalWriter,
  });
  const writes = new OneAtATime();
  const progress = () =>
    options.onProgress?.({
      phase: "enqueue",
      rows: survey.rows,
      bytes: survey.bytes,
      enqueued: writer.rows,
      toEnqueue: survey.newRows,
    });
  try {
    for await (const entries of spool.read()) {
      for (let i = 0; i < entries.length; i += BATCH) {
        const batch = entries.slice(i, i + BATCH);
        await writes.run(async () => {
          await writer.write(batch);
          progress();
        });
      }
    }
    await writes.drain();
  } catch (error) {
    throw recordRefused(error, options.campaign, writer) ?? error;
  } finally {
    await journalWriter?.close();
  }
  writer.finish();
  progress();
  if (writer.leftOut > 0)
    deps.log.warn(
      `campaign ${options.campaign}: ${writer.leftOut} rows of this file were left out: another import of the campaign recorded some of them at the same time (each is paid once); import the file again to record any left`,
    );
  return { rows: writer.rows, orders: writer.orders };
}

/** The ledger refused a batch of pass 2 (see RECORD); the batches before it are recorded. */
class RecordRefused extends Error {
  constructor(
    message: string,
    readonly rows: number,
    readonly orders: number,
  ) {
    super(message);
  }
}

function recordRefused(
  error: unknown,
  campaign: string,
  writer: CampaignWriter,
): RecordRefused | undefined {
  const before =
    writer.rows > 0
      ? `${writer.rows} new rows of this file were recorded before it, the rest were not`
      : "nothing was enqueued";
  if (error instanceof BudgetExceededError) {
    const c = error.currency;
    return new RecordRefused(
      `the campaign's ${c} budget ${unitsText(error.budget, c)} would be passed: ${unitsText(error.planned, c)} ${c} recorded (another import at the same time?) and ${unitsText(error.batch, c)} more in this batch; ${before}`,
      writer.rows,
      writer.orders,
    );
  }
  if (error instanceof CampaignClosedError)
    return new RecordRefused(
      `campaign ${campaign} was ${error.state} during the import; ${before}`,
      writer.rows,
      writer.orders,
    );
  return undefined;
}

/** The journal as pass 2 uses it: the index read at the start, and where new orders go. */
interface WriterJournal {
  index: JournalIndex | undefined;
  writer: OrderJournalWriter | undefined;
}

/** An order whose rows are all read; `journal`: rebuilt from the journal, at its generation. */
interface ReadyOrder {
  rows: SpooledRow[];
  journal?: { generation: number; apiKey: string | undefined };
}

/**
 * Turns planned rows into ledger records and jobs. With one row per order each row is an order
 * at once; with packing, or an order of the journal, rows wait until every row of their order
 * has been read.
 */
class CampaignWriter {
  rows = 0;
  orders = 0;
  /** Rows another import recorded between pass 1 and this one (see RECORD): not added here. */
  leftOut = 0;
  /** identity -> index of its packed order; only with packing. */
  private readonly orderOf = new Map<string, number>();
  private readonly packed: { identities: string[]; currency: string }[] = [];
  private readonly waiting = new Map<number, SpooledRow[]>();
  /** Rows of journal orders, by line, until each order is whole. */
  private readonly waitingJournal = new Map<number, SpooledRow[]>();

  constructor(
    private readonly campaign: string,
    private readonly deps: ImportDeps,
    private readonly survey: Survey,
    private readonly mode: ExecutionMode,
    packer: OrderPacker | undefined,
    private readonly journal: WriterJournal = { index: undefined, writer: undefined },
  ) {
    if (!packer) return;
    for (const order of packer.orders()) {
      const index = this.packed.push(order) - 1;
      for (const identity of order.identities) this.orderOf.set(identity, index);
    }
  }

  async write(fresh: SpoolEntry[]): Promise<void> {
    await this.place(this.completeOrders(fresh));
  }

  /** Holds rows until their order is whole; returns the orders now whole. */
  private completeOrders(fresh: SpooledRow[]): ReadyOrder[] {
    const ready: ReadyOrder[] = [];
    for (const planned of fresh) {
      const line = this.journalLineOf(planned);
      if (line !== undefined) {
        const index = this.journal.index!;
        const rows = gather(this.waitingJournal, line, planned, index.size(line));
        if (rows)
          ready.push({
            rows,
            journal: { generation: index.generation(line), apiKey: index.apiKey(line) },
          });
        continue;
      }
      if (this.packed.length === 0) {
        ready.push({ rows: [planned] });
        continue;
      }
      const index = this.orderOf.get(planned.identity);
      // Pass 1 packed exactly the rows it spooled: a row in no order would be lost silently.
      if (index === undefined) throw new Error(`${this.campaign}: a spooled row is in no order`);
      const rows = gather(this.waiting, index, planned, this.packed[index]!.identities.length);
      if (rows) ready.push({ rows });
    }
    return ready;
  }

  /** The journal order a new row is rebuilt in: one all of whose rows this import adds. */
  private journalLineOf(planned: SpooledRow): number | undefined {
    const index = this.journal.index;
    // A released row's order is the ledger's business: it moves to the next generation.
    if (!index || this.survey.released.has(planned.identity)) return undefined;
    const line = index.lineOf(planned.identity);
    return line !== undefined && index.reproduces(line) ? line : undefined;
  }

  /** A journal line of a new order, naming the API key it is expected to be sent with. */
  private journalLine(g: number, k: string, i: string[]): JournalLine {
    const a = this.deps.client?.keyFingerprint;
    return a ? { g, k, i, a } : { g, k, i };
  }

  finish(): void {
    // Pass 1 packed exactly the rows it spooled, so every order is whole by now.
    const left = this.waiting.size + this.waitingJournal.size;
    if (left > 0) throw new Error(`${this.campaign}: ${left} packed order(s) left incomplete`);
  }

  /**
   * Records the orders, each put on the campaign's pending list in the same script: the
   * dispatcher sends them from there (docs/architecture.md, "Campaigns and the dispatcher").
   * New orders go to the journal first, flushed (docs/architecture.md, "Lost ledger").
   */
  private async place(orders: ReadyOrder[]): Promise<void> {
    if (orders.length === 0) return;
    const batch: NewOrder[] = [];
    const journalLines: JournalLine[] = [];
    const released: string[] = [];
    for (const ready of orders) {
      // Same rows, same body: the key hashes sorted identities, so the items follow that order too.
      const rows = [...ready.rows].sort((a, b) =>
        a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0,
      );
      for (const p of rows) if (this.survey.released.has(p.identity)) released.push(p.identity);
      const generation =
        ready.journal?.generation ??
        Math.max(...rows.map((p) => this.survey.released.get(p.identity) ?? 0));
      const identities = rows.map((p) => p.identity);
      const currency = rows[0]!.currency;
      if (rows.some((p) => p.currency !== currency))
        throw new RunError(
          `campaign ${this.campaign}: rows the journal recorded in one order now pay in different currencies (the catalog changed?); nothing more was recorded`,
        );
      const key = orderKey(this.campaign, generation, identities);
      // A journal order is in the journal already.
      if (!ready.journal) journalLines.push(this.journalLine(generation, key, identities));
      // The ledger keeps what the body is made of: the rows' items, and the order's own parts.
      const { description, metadata } = buildOrderRequest(
        rows.map((p) => p.row),
        currency,
        { name: this.campaign },
      );
      const sum = (field: "face" | "price") =>
        String(rows.reduce((t, p) => t + BigInt(p[field]), 0n));
      batch.push({
        order: {
          key,
          identities,
          generation,
          status: "queued",
          mode: this.mode,
          currency,
          face: sum("face"),
          price: sum("price"),
          ...(description !== undefined ? { description } : {}),
          ...(metadata !== undefined ? { metadata } : {}),
          // The packer groups rows by send_at: all of an order's rows share it.
          ...(rows[0]!.row.send_at !== undefined ? { send_at: rows[0]!.row.send_at } : {}),
          ...(ready.journal ? lostLedgerMark(ready.journal.apiKey) : {}),
        },
        rows: rows.map((p) => [p.identity, ledgerRow(p, generation)]),
      });
    }
    // Durable before Redis hears of them: an order the ledger holds is always in the journal.
    await this.journal.writer?.append(journalLines);
    for (const identity of released) await this.deps.ledger.releaseRow(this.campaign, identity);
    const recorded = await this.deps.ledger.record(this.campaign, batch);
    this.rows += recorded.added;
    this.orders += recorded.orders;
    this.leftOut += recorded.leftOut;
  }
}

/**
 * An order rebuilt from the journal for rows the ledger did not know (a lost ledger): the lost
 * ledger may have sent it, so it starts with the mark of an unclear attempt, made with the API
 * key its journal line names (docs/architecture.md, "One key while an order may exist"). Sent
 * with that key, the service replays what it made; with another, nothing is sent.
 */
function lostLedgerMark(
  apiKey: string | undefined,
): Partial<Pick<LedgerOrder, "unclear" | "unclear_api_key">> {
  return { unclear: "ledger_lost", ...(apiKey ? { unclear_api_key: apiKey } : {}) };
}

/** Adds a row to its order's waiting rows; returns them all once the order has `size`. */
function gather(
  waiting: Map<number, SpooledRow[]>,
  order: number,
  planned: SpooledRow,
  size: number,
): SpooledRow[] | undefined {
  const rows = waiting.get(order) ?? [];
  rows.push(planned);
  if (rows.length < size) {
    waiting.set(order, rows);
    return undefined;
  }
  waiting.delete(order);
  return rows;
}

function ledgerRow(p: SpooledRow, generation: number): Omit<LedgerRow, "order"> {
  return {
    line: p.row.line,
    generation,
    payload_hash: p.payload,
    email: p.row.email,
    product_code: p.row.product_code,
    face_value: p.row.face_value,
    currency: p.currency,
    ...(p.row.reference !== undefined ? { reference: p.row.reference } : {}),
    ...(p.row.template_id !== undefined ? { template_id: p.row.template_id } : {}),
  };
}
