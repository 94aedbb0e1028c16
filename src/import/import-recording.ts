import { setImmediate as turnOfTheLoop } from "node:timers/promises";
import type { JobsOptions } from "bullmq";
import type { ExecutionMode } from "../api/order-request.js";
import { FOUR_EYES_FIELDS, withImporter } from "../campaigns/four-eyes.js";
import { moveCampaign } from "../campaigns/state.js";
import { addedRepeats } from "../campaigns/status.js";
import { recordingMarked } from "../campaigns/unfinished-import.js";
import { BudgetExceededError, CampaignClosedError } from "../ledger/record-errors.js";
import { type CurrencyBudget, unitsText } from "../orders/budget.js";
import type { JournalVerdict } from "../orders/journal-index.js";
import { campaignTagsOrders } from "../orders/order-tags.js";
import { plural } from "../plural.js";
import { CampaignWriter, type PreparedBatch } from "./campaign-writer.js";
import type { Existing } from "./import-checks.js";
import { RecordRefused } from "./import-errors.js";
import { importerOf, type RecordingOptions } from "./import-stages.js";
import type { ImportPlan, Survey } from "./import-survey.js";
import type { ImportDeps, ImportProgress } from "./import-types.js";
import { journalWarning, repackFromSpool } from "./journal-checks.js";
import { RecordingPipeline } from "./recording-pipeline.js";
import type { RepeatGroup } from "./repeats.js";
import type { RowSpool, SpoolEntry } from "./row-spool.js";

/** What the checks between the passes decided, for pass 2. */
export interface Decided {
  /** --hold, and the campaign is new or gets new rows: an existing one is held before them. */
  holdNow: boolean;
  existing: Existing | undefined;
  /** The budgets to store on the campaign. */
  budgets: Map<string, CurrencyBudget>;
  verdict: JournalVerdict | undefined;
  /** The campaign waits for `orders approve` after this import. */
  heldAfter: boolean;
  /** The price that passed GIFTJOBS_APPROVAL_THRESHOLD, when one did. */
  fourEyes?: string;
}

/** What pass 2 records: the stage's values, pass 1's survey and plan, and what was decided. */
export interface PassTwo {
  recording: RecordingOptions;
  onProgress?: (progress: ImportProgress) => void;
  survey: Survey;
  plan: ImportPlan & { spool: RowSpool };
  decided: Decided;
}

/**
 * Pass 2 with what goes before it: the campaign registered (held when it is to be) and its
 * budgets stored, then the rows recorded while the campaign is marked as being recorded.
 */
export async function recordCampaign(
  deps: ImportDeps,
  { recording, onProgress, survey, plan, decided }: PassTwo,
): Promise<{ rows: number; orders: number }> {
  const { holdNow, existing, budgets, verdict, heldAfter, fourEyes } = decided;
  const { mode, itemsPerOrder } = plan;
  const tagOrders = await orderTagsFor(deps, { campaign: recording.campaign, existing, plan });
  await deps.ledger.campaigns.register(recording.campaign, {
    ...(tagOrders ? { order_tags: "1" } : {}),
    execution_mode: mode,
    items_per_order: String(itemsPerOrder),
    state: recording.hold ? "held" : "running",
    ...(recording.hold ? {} : { approved_at: new Date().toISOString() }),
    ...(recording.jobOptions ? { job_options: retryPolicy(recording.jobOptions) } : {}),
  });
  // Held before a new row is recorded: the dispatcher never sees them in a running campaign.
  if (holdNow && existing) await moveCampaign(deps.ledger, recording.campaign, "hold");
  await recordImporter(deps, { ...recording, existing, held: heldAfter, fourEyes });
  // Said before the rows are: status and the report tell which campaigns it pays again.
  if (survey.repeats && survey.repeats.rows > 0 && recording.repeats === "allow")
    await deps.ledger.campaigns.setMeta(recording.campaign, {
      repeats: repeatsMeta(existing?.meta.repeats, survey.repeats.list()),
    });
  // Stored before the rows: RECORD checks each batch against it.
  if (budgets.size > 0)
    await deps.ledger.campaigns.setMeta(
      recording.campaign,
      Object.fromEntries([...budgets].map(([c, b]) => [`budget:${c}`, String(b.units)])),
    );
  const warning = verdict && journalWarning(verdict, recording.campaign, plan.journal!.path);
  if (warning) deps.log.warn({ campaign: recording.campaign }, warning);
  return recordingMarked(deps.ledger, recording.campaign, () =>
    writeCampaign(deps, { campaign: recording.campaign, onProgress, survey, plan, tagOrders }),
  );
}

/**
 * Who imported the rows a held campaign waits with, and the four-eyes rule when its price
 * passed the threshold (src/campaigns/four-eyes.ts); an import that leaves the campaign
 * running starts the list again, its rows being sent already.
 */
async function recordImporter(
  deps: ImportDeps,
  recording: Pick<RecordingOptions, "campaign" | "actor"> & {
    existing: Existing | undefined;
    held: boolean;
    fourEyes: string | undefined;
  },
): Promise<void> {
  const { campaign, existing, held, fourEyes } = recording;
  if (!held) {
    if (existing) await deps.ledger.campaigns.clearMeta(campaign, FOUR_EYES_FIELDS.importers);
    return;
  }
  const name = importerOf(recording);
  await deps.ledger.campaigns.setMeta(campaign, {
    [FOUR_EYES_FIELDS.importers]: withImporter(existing?.meta, name),
    ...(fourEyes ? { [FOUR_EYES_FIELDS.rule]: fourEyes } : {}),
  });
}

/**
 * Whether the campaign's orders carry the tags naming campaign and key (campaignTagsOrders),
 * and when they do, the marker beside the journal written (flushed) before any order is.
 */
async function orderTagsFor(
  deps: ImportDeps,
  {
    campaign,
    existing,
    plan,
  }: { campaign: string; existing: Existing | undefined; plan: ImportPlan },
): Promise<boolean> {
  const store = deps.stores.journal;
  const marker = await store.hasTagsMarker(campaign);
  const tagged = campaignTagsOrders({
    marker,
    meta: existing?.meta,
    journalOrders: plan.journal?.lines ?? 0,
  });
  if (tagged && !marker) await store.writeTagsMarker(campaign);
  return tagged;
}

/** The attempts and backoff of a campaign's jobs, as recorded for the dispatcher. */
function retryPolicy({ attempts, backoff }: Pick<JobsOptions, "attempts" | "backoff">): string {
  return JSON.stringify({ attempts, backoff });
}

/**
 * Rows a batch of pass 2: each batch costs a journal and a paid-memory flush and a RECORD call
 * (RECORD holds Redis about 8 µs a row, some 4 ms a batch). 500 rather than the 1,000 of the
 * import bench's floor: what the batches in flight hold outlives the young generation's
 * collections, and at 1,000 the import's peak RSS at a million rows was some 15-20 MB higher
 * for no less time (docs/architecture/import.md, "Pass 2 in step").
 */
const RECORD_BATCH = 500;

/**
 * Pass 2: from the spool of pass 1, record the ledger, then add the jobs, a batch at a time.
 * Returns what was new.
 */
async function writeCampaign(
  deps: ImportDeps,
  written: Omit<PassTwo, "recording" | "decided"> & { campaign: string; tagOrders: boolean },
): Promise<{ rows: number; orders: number }> {
  const { campaign, onProgress, survey, tagOrders } = written;
  const { mode, packer, journal, spool } = written.plan;
  if (journal && packer)
    await repackFromSpool(spool, { journal, released: survey.released, packer });
  const stored = (await deps.ledger.campaigns.meta(campaign)).execution_mode;
  const journalWriter = deps.stores.journal.appender(campaign);
  const paid = deps.stores.paidMemory.appender(campaign);
  const writer = new CampaignWriter(deps, {
    campaign,
    survey,
    mode,
    packer,
    journal: { index: journal, writer: journalWriter, paid },
    tagOrders,
    campaignMode: (stored as ExecutionMode | undefined) ?? null,
  });
  const pipeline = new RecordingPipeline<PreparedBatch>(
    (batch) => writer.makeDurable(batch),
    (batch, before) => {
      const sending = writer.record(batch, before);
      return { sent: sending.sent, recorded: sending.recorded.then(progress) };
    },
  );
  const progress = () =>
    onProgress?.({
      phase: "enqueue",
      rows: survey.rows,
      bytes: survey.bytes,
      enqueued: writer.rows,
      toEnqueue: survey.newRows,
    });
  try {
    // The service's prices when it gave them (docs/architecture/import.md, "Prices").
    const add = async (rows: SpoolEntry[]) => {
      // The answers come in before the next batch is prepared (several ms of the main thread):
      // a batch's lines written, RECORD's reply. Taken in after it, each would wait for it, and
      // the steps of a batch in flight (docs/architecture/import.md, "Pass 2 in step") would
      // wait for one preparation each.
      await turnOfTheLoop();
      const batch = writer.prepare(survey.cards.priced(rows));
      if (batch) await pipeline.add(batch);
    };
    let rows: SpoolEntry[] = [];
    // One array a batch, filled in place: no slice or concat of what is left a read.
    for await (const entries of spool.read())
      for (const entry of entries) {
        rows.push(entry);
        if (rows.length < RECORD_BATCH) continue;
        await add(rows);
        rows = [];
      }
    if (rows.length > 0) await add(rows);
    await pipeline.drain();
  } catch (error) {
    // Nothing more is written once a step failed: the files close after the steps in flight.
    await pipeline.drain().catch(() => {});
    throw recordRefused(error, campaign, writer) ?? error;
  } finally {
    await journalWriter?.close();
    await paid?.close();
    // Left should Redis not answer now: it expires within the hour, and a new import has its own.
    await writer.removeFence().catch(() => {});
  }
  writer.finish();
  progress();
  if (writer.leftOut > 0)
    deps.log.warn(
      `campaign ${campaign}: ${writer.leftOut} ${plural(writer.leftOut, "row", "rows")} of this file ${plural(writer.leftOut, "was", "were")} left out: another import of the campaign recorded some of them at the same time (each is paid once); import the file again to record any left`,
    );
  return { rows: writer.rows, orders: writer.orders };
}

function recordRefused(
  error: unknown,
  campaign: string,
  writer: CampaignWriter,
): RecordRefused | undefined {
  const before =
    writer.rows > 0
      ? `${writer.rows} new ${plural(writer.rows, "row")} of this file ${plural(writer.rows, "was", "were")} recorded before it, the rest were not`
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

/**
 * The campaign's `repeats` meta: rows paid again knowingly (--allow-repeats), per earlier
 * campaign, as JSON `{"gifts": 12}`, added to what earlier imports of the campaign allowed.
 */
function repeatsMeta(stored: string | undefined, groups: readonly RepeatGroup[]): string {
  return addedRepeats(stored, Object.fromEntries(groups.map((g) => [g.campaign, g.rows])));
}
