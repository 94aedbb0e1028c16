import type { ExecutionMode } from "../api/order-request.js";
import { type EarlierRow, type RepeatFinder, repeatOf } from "../campaigns/earlier-payments.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import { samePayload } from "../ledger/codec.js";
import type { LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import { identityAndPayload, OccurrenceCounter } from "../orders/identity.js";
import type { JournalIndex } from "../orders/journal-index.js";
import type { OrderRow } from "../orders/order-row.js";
import type { OrderPacker } from "../orders/packing.js";
import { paidFingerprint } from "../orders/paid-fingerprint.js";
import type { PaidMemory } from "../orders/paid-memory.js";
import { CampaignTotals } from "../orders/totals.js";
import { CardBook } from "./card-prices.js";
import type { HeaderOptions, ReadOptions, ValidationOptions } from "./import-stages.js";
import type { ImportDeps, ImportProgress } from "./import-types.js";
import type { InvalidRowsFile } from "./invalid-rows-file.js";
import { OneAtATime } from "./one-at-a-time.js";
import type { CsvItem, CsvRow } from "./readers/csv-rows.js";
import { readOrderFileBatches } from "./readers/order-file.js";
import { regularFileSize } from "./readers/order-input.js";
import type { RepeatGroups, RepeatsChoice } from "./repeats.js";
import type { RowSpool, SpoolEntry } from "./row-spool.js";
import { ReferenceTracker } from "./validation/reference-tracker.js";
import { RiskyFileCheck } from "./validation/risky-files.js";
import type { RowError } from "./validation/row-error.js";
import { RowPreflight } from "./validation/row-preflight.js";
import {
  type RowValidation,
  type ValidateRowOptions,
  validateRow,
} from "./validation/row-validation.js";

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
export class Survey {
  rows = 0;
  /** Bytes of the file parsed so far. */
  bytes = 0;
  valid = 0;
  newRows = 0;
  /** New rows whose identity the ledger did not know (not released ones). */
  freshRows = 0;
  known = 0;
  /** Problems found, all rows' (a row may have several). */
  errorCount = 0;
  /** Rows with at least one problem. */
  invalidRows = 0;
  readonly errors: RowError[] = [];
  /** Rows of a report left out with --from-report, by status (risky-files.ts). */
  leftOut = new Map<string, number>();
  /** Of the valid rows, and of the new ones: replaced by the service's once it priced them. */
  totals = new CampaignTotals();
  newTotals = new CampaignTotals();
  /**
   * The valid rows' distinct cards, for the service to price (docs/architecture/import.md,
   * "Prices").
   */
  readonly cards = new CardBook();
  /** Rows released from a final failure: identity -> next generation. */
  readonly released = new Map<string, number>();
  /** New rows that repeat rows of other campaigns, refused, skipped or allowed (repeats.ts). */
  repeats: RepeatGroups | undefined;
  /** One invalid row and every problem of it; the first ERRORS_LISTED problems are listed. */
  addRowErrors(errors: readonly RowError[]): void {
    this.invalidRows += 1;
    this.errorCount += errors.length;
    for (const error of errors) if (this.errors.length < ERRORS_LISTED) this.errors.push(error);
  }
}

/** How this import runs, and where pass 1 sends what it decides besides the survey. */
export interface ImportPlan {
  mode: ExecutionMode;
  itemsPerOrder: number;
  packer: OrderPacker | undefined;
  /** The campaign's order journal as read at the start; none without a data dir. */
  journal: JournalIndex | undefined;
  invalidFile: InvalidRowsFile | undefined;
  /** None on a dry run. */
  spool: RowSpool | undefined;
  /** The check against other campaigns' rows; none without a paid memory (no data dir). */
  repeats?: RepeatCheck;
  /**
   * The campaign had no ledger when pass 1 began: no row can be known to it, so pass 1 looks
   * none up (a new campaign's rows are all new). One that appears meanwhile is refused between
   * the passes (checkCampaign).
   */
  newCampaign: boolean;
}

/** How an import checks its rows against other campaigns' (docs/architecture/repeats.md). */
export interface RepeatCheck {
  finder: RepeatFinder;
  choice: RepeatsChoice;
  groups: RepeatGroups;
  memory: PaidMemory;
  /** The window's start, ms since 1970. */
  since: number;
  /** sha256 (hex) of the file's bytes; undefined when it could not be read. */
  fileHash: Promise<string | undefined>;
}

/** What pass 1 takes of the import's stages: reading, the header, validation, progress. */
export interface SurveyInput {
  campaign: string;
  read: ReadOptions;
  header: HeaderOptions;
  validation: ValidationOptions;
  onProgress?: (progress: ImportProgress) => void;
}

/**
 * Pass 1: read, validate, preflight, price, and classify each row against the ledger. What
 * pass 2 must write goes to the spool (none on a dry run).
 */
export async function surveyFile(
  input: SurveyInput,
  deps: ImportDeps,
  plan: ImportPlan,
): Promise<Survey> {
  const { campaign } = input;
  const survey = new Survey();
  const lookups = new OneAtATime();
  for await (const rows of plannedRows(input, deps.catalog, survey, plan.invalidFile)) {
    const batch = { rows, earlier: plan.repeats && lookUpEarlier(rows, plan.repeats) };
    if (rows.length < BATCH) {
      // The last one: no progress after it, as before.
      await lookups.run(() => classify(campaign, batch, deps, survey, plan));
      continue;
    }
    await lookups.run(async () => {
      await classify(campaign, batch, deps, survey, plan);
      input.onProgress?.({
        phase: "validate",
        rows: survey.rows,
        bytes: survey.bytes,
        enqueued: 0,
        toEnqueue: 0,
      });
    });
  }
  await lookups.drain();
  return survey;
}

/** A batch of valid rows, and the lookup of the earlier rows they repeat, begun as it was read. */
interface ReadBatch {
  rows: PlannedRow[];
  /** None without a repeats check. */
  earlier: Promise<LookedUp> | undefined;
}

/** Each row's paid fingerprint, and the earlier rows of other campaigns it repeats. */
interface LookedUp {
  fingerprints: (string | undefined)[];
  earlier: EarlierRow[][];
}

/**
 * The earlier rows a batch's rows repeat (docs/architecture/repeats.md), looked up for every row
 * as soon as the batch is read, beside the batch before it being classified: the lookup (one
 * query of the paid memory, then the earlier campaigns' ledgers) reads only what other campaigns
 * recorded, which pass 1 never writes. Which rows count as new is decided by `classify`.
 */
function lookUpEarlier(rows: readonly PlannedRow[], repeats: RepeatCheck): Promise<LookedUp> {
  const fingerprints = rows.map((p) => paidFingerprint(p.row, p.currency));
  const found = repeats.finder.find(fingerprints).then((earlier) => ({ fingerprints, earlier }));
  // Awaited by classify; the catch only stops an "unhandled rejection" meanwhile.
  found.catch(() => {});
  return found;
}

/**
 * Valid rows with their identity, payload hash, currency and price, BATCH at a time (the last
 * batch shorter, never empty): one promise a batch, not a row. Errors go to the survey.
 */
async function* plannedRows(
  { read, header, validation }: SurveyInput,
  catalog: CatalogIndex | undefined,
  survey: Survey,
  invalidFile: InvalidRowsFile | undefined,
): AsyncGenerator<PlannedRow[]> {
  const preflight = new RowPreflight(catalog, validation.preflight);
  const occurrences = new OccurrenceCounter();
  const rowOptions = { ...validation.row, references: new ReferenceTracker() };
  const tables = new FileTables(
    await regularFileSize(read.file),
    occurrences,
    rowOptions.references,
  );
  const risky = new RiskyFileCheck(validation.risky);
  survey.leftOut = risky.leftOut;
  const { file, ...reading } = read;
  let batch: PlannedRow[] = [];
  // Where each row of the reader's batch ends in the file, told as the reader made the batch:
  // the bar moves row by row as the rows are checked, not a batch ahead of them. (A row the
  // reader tells and leaves out, a totals row, puts the bar one row ahead until the batch ends.)
  const ends: number[] = [];
  for await (const items of readOrderFileBatches(file, {
    ...reading,
    ...header,
    onPosition: (bytes) => {
      ends.push(bytes);
    },
    onHeader: (found) => {
      risky.onHeader(found);
      preflight.onHeader(found.renamed);
      invalidFile?.setHeader(found.names, found.renamed);
      header.onHeader?.(found);
    },
  })) {
    // A loop over the reader's batch: no promise a row but for an invalid row's line written.
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      survey.bytes = ends[Math.min(i, ends.length - 1)] ?? survey.bytes;
      if (!risky.admit(item)) continue;
      survey.rows += 1;
      tables.estimate(survey.rows, survey.bytes);
      const outcome = checkItem(item, rowOptions, preflight);
      if ("errors" in outcome) {
        survey.addRowErrors(outcome.errors);
        await invalidFile?.write(item, outcome.errors);
        continue;
      }
      const { identity, payload } = identityAndPayload(outcome.row, occurrences);
      batch.push({
        row: outcome.row,
        item,
        identity,
        payload,
        currency: outcome.currency,
        faceUnits: outcome.faceUnits,
        priceUnits: outcome.priceUnits,
      });
      if (batch.length < BATCH) continue;
      yield batch;
      batch = [];
    }
    survey.bytes = ends.at(-1) ?? survey.bytes;
    ends.length = 0;
  }
  if (batch.length > 0) yield batch;
  risky.onEnd(survey.rows);
}

/** Rows read before pass 1 tells its tables how many rows the file holds, from their bytes. */
const ESTIMATE_AFTER_ROWS = 1000;

/**
 * The tables pass 1 keeps a digest of each row in (the file's references, its rows' contents),
 * told once, after ESTIMATE_AFTER_ROWS rows, how many rows the file holds in all, as far as the
 * bytes read so far tell, with 10% more (a table told too few grows by half): each is then made
 * that size at once instead of doubling as it fills, about 29 MB where doubling came to 42 MB
 * for a million rows, and 63 MB while the last doubling copied (DigestTable.reserve). A pipe or
 * standard input, whose size is not known, is left to the doublings.
 */
class FileTables {
  private told = false;

  constructor(
    private readonly fileBytes: number | undefined,
    private readonly occurrences: OccurrenceCounter,
    private readonly references: ReferenceTracker,
  ) {}

  estimate(rows: number, bytesRead: number): void {
    if (this.told || rows < ESTIMATE_AFTER_ROWS) return;
    this.told = true;
    if (this.fileBytes === undefined || bytesRead <= 0) return;
    const expected = Math.ceil((this.fileBytes / bytesRead) * rows * 1.1);
    // Each table as many rows as used it so far, in proportion: rows with a reference use one,
    // rows without the other.
    this.references.reserve(Math.ceil((expected * this.references.size) / rows));
    this.occurrences.reserve(Math.ceil((expected * this.occurrences.size) / rows));
  }
}

type CheckedItem =
  | { errors: RowError[] }
  | { row: OrderRow; currency: string; faceUnits: bigint; priceUnits: bigint };

function checkItem(
  item: CsvItem,
  rowOptions: ValidateRowOptions,
  preflight: RowPreflight,
): CheckedItem {
  if (item.kind === "error") return { errors: [item.error] };
  const validation = validateRow(item, rowOptions);
  if (item.problems || !validation.ok) return { errors: everyProblem(item, validation, preflight) };
  const checked = preflight.check(validation.row);
  if (!checked.ok) return { errors: checked.errors };
  return {
    row: validation.row,
    currency: checked.currency,
    faceUnits: checked.faceUnits,
    priceUnits: checked.priceUnits,
  };
}

/**
 * Every problem of a row its cells or validation refused: the cells that could not be read, what
 * validation found, then what the catalog finds in the rest of the row, one column never named
 * twice (docs/order-files.md, "Every problem of a row").
 */
function everyProblem(
  item: CsvRow,
  validation: RowValidation,
  preflight: RowPreflight,
): RowError[] {
  const errors = [...(item.problems ?? [])];
  // A cell that could not be read (a formula, a date) was read as "": not "required" again.
  const named = new Set(errors.map((e) => e.column));
  if (!validation.ok) errors.push(...validation.errors.filter((e) => !named.has(e.column)));
  const row = validation.ok ? validation.row : validation.partial;
  if (row === undefined) return errors;
  for (const error of errors) named.add(error.column);
  return [...errors, ...preflight.problems(row).filter((e) => !named.has(e.column))];
}

/**
 * Looks a batch up in the ledger: known with the same content -> already known (its job is
 * added again while its order is queued); known with changed content -> a conflict, unless its
 * order failed for good; unknown -> new.
 */
async function classify(
  campaign: string,
  { rows: batch, earlier: lookedUp }: ReadBatch,
  deps: ImportDeps,
  survey: Survey,
  plan: ImportPlan,
): Promise<void> {
  const { packer, journal, invalidFile, spool } = plan;
  const { recorded, orders } = await ledgerRecords(campaign, batch, deps, plan.newCampaign);
  const { fingerprints, earlier } = await earlierRows(batch, recorded, {
    lookedUp,
    journal: plan.journal,
  });
  const toWrite: SpoolEntry[] = [];
  // Rows refused here, written to the error file after the loop, in their order: no promise a row.
  const refused: [CsvItem, RowError][] = [];
  for (let i = 0; i < batch.length; i++) {
    const planned = batch[i]!;
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
        survey.addRowErrors([error]);
        refused.push([planned.item, error]);
        continue;
      }
      // Its earlier order failed for good (nothing was made): the changed row may go, as the next generation.
      survey.released.set(planned.identity, known.generation + 1);
    }
    survey.valid += 1;
    survey.totals.add(planned.currency, planned.faceUnits, planned.priceUnits);
    // A row the journal names but the ledger does not know keeps the order it was recorded in.
    const journalLine = journal?.note(planned.identity, !known);
    const fresh = !known || survey.released.has(planned.identity);
    const repeated = fresh ? earlier[i]! : [];
    const skipped = noteRepeat(planned, repeated, plan.repeats, refused);
    const { row, currency, faceUnits, priceUnits } = planned;
    survey.cards.count(row, currency, faceUnits, priceUnits, fresh && !skipped);
    if (!fresh) {
      // Recorded with its order on the pending list in one script: nothing to add again.
      survey.known += 1;
      continue;
    }
    if (skipped) continue;
    survey.newRows += 1;
    if (!known) survey.freshRows += 1;
    survey.newTotals.add(planned.currency, planned.faceUnits, planned.priceUnits);
    if (known || journalLine === undefined)
      packer?.add(planned.identity, planned.currency, planned.row.send_at);
    const entry: SpoolEntry = {
      kind: "new",
      identity: planned.identity,
      payload: planned.payload,
      currency,
      face: String(faceUnits),
      price: String(priceUnits),
      row,
    };
    // Recorded with --allow-repeats: its report names the rows it pays again.
    if (repeated.length > 0) entry.repeat_of = repeatOf(repeated);
    // Hashed once: pass 2 writes it to the paid memory (paidEntries).
    if (fingerprints[i] !== undefined) entry.fingerprint = fingerprints[i];
    toWrite.push(entry);
  }
  if (invalidFile) for (const [item, error] of refused) await invalidFile.write(item, [error]);
  await spool?.write(toWrite);
}

/** The ledger's records of a batch's rows, and of their orders; none for a new campaign. */
async function ledgerRecords(
  campaign: string,
  batch: readonly PlannedRow[],
  deps: ImportDeps,
  newCampaign: boolean,
): Promise<{ recorded: (LedgerRow | undefined)[]; orders: Map<number, LedgerOrder | undefined> }> {
  if (newCampaign) return { recorded: new Array(batch.length), orders: new Map() };
  const recorded = await deps.ledger.orders.getRows(
    campaign,
    batch.map((p) => p.identity),
  );
  const numbers = [
    ...new Set(recorded.filter((r): r is LedgerRow => r !== undefined).map((r) => r.order)),
  ];
  const found = await deps.ledger.orders.getOrders(campaign, numbers);
  return { recorded, orders: new Map(found.map((o, i) => [numbers[i]!, o])) };
}

/**
 * For each row of a batch that is new to this campaign, its paid fingerprint and the earlier rows
 * of other campaigns it repeats (docs/architecture/repeats.md), from the batch's lookup (one for
 * the batch, never one a row); none for the other rows.
 */
async function earlierRows(
  batch: readonly PlannedRow[],
  recorded: readonly (LedgerRow | undefined)[],
  { lookedUp, journal }: { lookedUp: Promise<LookedUp> | undefined; journal?: JournalIndex },
): Promise<LookedUp> {
  if (!lookedUp) return { fingerprints: [], earlier: batch.map(() => []) };
  const found = await lookedUp;
  // A row the ledger knows with the same content is no new payment; a changed one may be. Nor is
  // one the campaign's journal names: a lost ledger's row, recorded here before, whose order
  // keeps its key (docs/architecture/repeats.md, "The check").
  const fingerprints = batch.map((p, i) =>
    (recorded[i] && samePayload(recorded[i].payload_hash, p.payload)) ||
    (!recorded[i] && journal?.lineOf(p.identity) !== undefined)
      ? undefined
      : found.fingerprints[i],
  );
  const earlier = fingerprints.map((f, i) => (f === undefined ? [] : found.earlier[i]!));
  return { fingerprints, earlier };
}

/**
 * Notes a new row that repeats earlier rows; true when it is to be left out (--skip-repeats).
 * Refused, it goes to `refused`, for the error file, with the earlier row it repeats.
 */
function noteRepeat(
  planned: PlannedRow,
  earlier: readonly EarlierRow[],
  repeats: RepeatCheck | undefined,
  refused: [CsvItem, RowError][],
): boolean {
  if (earlier.length === 0 || !repeats) return false;
  repeats.groups.add(planned.row.line, planned.currency, planned.faceUnits, earlier);
  if (repeats.choice === "refuse") refused.push([planned.item, repeatError(planned, earlier)]);
  return repeats.choice === "skip";
}

/** A repeated row's line in the error file. */
function repeatError(planned: PlannedRow, earlier: readonly EarlierRow[]): RowError {
  const first = earlier[0]!;
  return {
    line: planned.row.line,
    column: planned.row.email ? "email" : "reference",
    message: `paid before in campaign ${first.campaign} (line ${first.line} there, ${first.status}): pass --allow-repeats to pay it again`,
  };
}
