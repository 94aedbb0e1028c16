import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { RowStatus } from "../ledger/row-status.js";
import type { KeyClearance, LedgerOrder, LedgerRow } from "../ledger/types.js";
import type { OrderJournal } from "../orders/journal-store.js";
import { orderKey } from "../orders/keys.js";
import { paidFingerprint } from "../orders/paid-fingerprint.js";
import type { Stores } from "../stores/stores.js";
import { type EarlierRow, REPEAT_WINDOW_DAYS, RepeatFinder, repeatOf } from "./earlier-payments.js";
import { forgetBegun, forgottenRefusal } from "./forget-records.js";
import { storedState } from "./state.js";
import { addedRepeats } from "./status.js";

export interface RetryOptions {
  /** Move failed_final rows to the next generation (a new key). */
  newKey?: boolean;
  /**
   * With newKey (`--include-uncertain`): also failed_uncertain rows, and failed_final ones whose
   * key had an unclear attempt, go under a new key. An order may exist under the old key: that
   * could pay twice.
   */
  includeUncertain?: boolean;
  /**
   * Without newKey (`--any-api-key`): send failed_uncertain rows under their same key even when
   * their unclear attempt was made with another API key than the one sending now (the service
   * may keep its idempotency records per API key: the operator checked its orders).
   */
  anyApiKey?: boolean;
  /**
   * The stores (src/stores/stores.ts): the campaign's order journal, needed with newKey, and the
   * paid memory the repeats check reads. None: neither is read.
   */
  stores?: Stores;
  /** Not a place: the stores say where (openStores). A raw one here would be a second choice. */
  dataDir?: never;
  /** Not a place: the stores say where (openStores). A raw one here would be a second choice. */
  database?: never;
  /** Fingerprint of the API key the new keys are to be sent with (see apiKeyFingerprint). */
  apiKey?: string;
  /**
   * With newKey: move rows on even when another campaign has paid the same person the same
   * card since (docs/architecture/repeats.md, "Retries"). @defaultValue false
   */
  allowRepeats?: boolean;
  /** How far back the paid memory is looked at, in days. @defaultValue 90 */
  repeatWindowDays?: number;
  /**
   * Called with the plan once the checks have passed and before the first change: the audit
   * entry is written there (docs/architecture/audit.md, "An entry before its effect").
   */
  beforeMove?: (plan: RetryResult) => Promise<void>;
}

export interface RetryResult {
  orders: number;
  rows: number;
  mode: "same-key" | "new-key";
  /** Orders --new-key left alone: an attempt under their key ended unclear (an order may exist). */
  unclear: number;
  /** Of the orders moved, failed_uncertain ones `orders reconcile` found absent (see below). */
  absent: number;
  /**
   * Orders --new-key left alone because a row of theirs repeats a row another campaign recorded
   * since (docs/architecture/repeats.md, "Retries"); absent when none.
   */
  repeats?: number;
  /**
   * With --allow-repeats: the rows moved on that pay again what other campaigns paid, per
   * earlier campaign (counted into the campaign's `repeats`, as an import's); absent when none.
   */
  repeated?: Record<string, number>;
}

/**
 * A failed_uncertain order `orders reconcile` found no order for on the service, listing with the
 * API key its unclear attempt was made with: `--new-key` may move it on without
 * --include-uncertain (the
 * ledger checks the same in REKEY). See docs/architecture/keys-and-exactly-once.md, "Reconciling
 * with the service".
 */
function reconciledAbsent(order: LedgerOrder): boolean {
  return (
    order.status === "failed_uncertain" &&
    Boolean(order.reconciled_absent_at) &&
    Boolean(order.unclear_api_key) &&
    order.reconciled_api_key === order.unclear_api_key
  );
}

/**
 * `orders retry`: without newKey, failed_uncertain orders go again under their SAME key (the
 * service replays an order that was made, so nothing is paid twice). With newKey, failed_final
 * orders (nothing was made) go under the next generation's key; failed_uncertain ones only
 * with includeUncertain, since an order may exist under the old key, or when `orders reconcile`
 * found none (reconciledAbsent). Either way the orders go on the
 * campaign's pending list, and the dispatcher sends them while the campaign runs. A new key is
 * journaled (flushed) before the ledger holds it (docs/architecture/keys-and-exactly-once.md, "One
 * key while an order may exist"), and the ledger refuses one, without includeUncertain, for an order whose
 * key's last attempt ended unclear; a refused one's journal line is voided (underNewKey).
 */
export async function retryCampaign(
  ledger: Ledger,
  campaign: string,
  options: RetryOptions,
): Promise<RetryResult> {
  checkRetryOptions(options);
  const meta = await ledger.campaigns.meta(campaign);
  const state = storedState(meta);
  if (state === "cancelled" || state === "archived")
    throw new UserError(
      `campaign ${campaign} is ${state}: its rows cannot be retried${state === "archived" ? " (orders restore first)" : ""}`,
    );
  if (forgetBegun(meta)) throw new UserError(forgottenRefusal(campaign, "retried"));
  const journal = options.stores?.journal;
  if (options.newKey && !journal)
    throw new Error("retry --new-key needs the campaign's journal (its data dir or the database)");
  const statuses = options.newKey
    ? options.includeUncertain
      ? ["failed_final", "failed_uncertain"]
      : ["failed_final"]
    : ["failed_uncertain"];
  const result: RetryResult = {
    orders: 0,
    rows: 0,
    mode: options.newKey ? "new-key" : "same-key",
    unclear: 0,
    absent: 0,
  };
  const plan = await planRetry(ledger, campaign, { ...options, statuses });
  await options.beforeMove?.(plannedResult(result, plan));
  const repeated: Record<string, number> = {};
  for (const move of plan.moves) {
    const { number, order, absent, marks } = move;
    // Paid again knowingly: each such row names the rows it repeats before it moves on, and
    // loses them again when it does not.
    if (marks.length > 0) await ledger.orders.putRows(campaign, marked(marks));
    const moved = options.newKey
      ? await underNewKey(ledger, campaign, number, order, { ...options, absent, journal })
      : await underSameKey(ledger, campaign, { number, anyApiKey: options.anyApiKey });
    if (moved === "unclear") result.unclear += 1;
    if (moved !== true) {
      if (marks.length > 0) await ledger.orders.putRows(campaign, unmarked(marks));
      continue;
    }
    result.orders += 1;
    result.rows += order.identities.length;
    if (absent) result.absent += 1;
    countRepeated(repeated, marks);
  }
  result.unclear += plan.unclear;
  if (plan.repeats > 0) result.repeats = plan.repeats;
  if (Object.keys(repeated).length > 0) {
    result.repeated = repeated;
    const stored = (await ledger.campaigns.meta(campaign)).repeats;
    await ledger.campaigns.setMeta(campaign, { repeats: addedRepeats(stored, repeated) });
  }
  return result;
}

/**
 * `includeUncertain` widens a retry under new keys, `anyApiKey` one under the same keys: each
 * asked of the other kind is a mistake, refused rather than ignored.
 */
export function checkRetryOptions(options: RetryOptions): void {
  if (options.includeUncertain && !options.newKey)
    throw new UserError(
      "--include-uncertain goes with --new-key (failed_uncertain rows under new keys); without --new-key they are retried under their same keys already",
    );
  if (options.anyApiKey && options.newKey)
    throw new UserError(
      "--any-api-key goes without --new-key (failed_uncertain rows under their same keys); with --new-key, --include-uncertain moves them to new keys",
    );
}

/** An order a retry is to move, as its checks found it. */
interface PlannedMove {
  number: number;
  order: LedgerOrder;
  absent: boolean;
  marks: RepeatMark[];
}

interface RetryPlan {
  moves: PlannedMove[];
  /** Left alone: an attempt under their key ended unclear (--new-key without --include-uncertain). */
  unclear: number;
  /** Left alone: a row repeats another campaign's (--new-key without --allow-repeats). */
  repeats: number;
}

/**
 * The orders a retry is to move, read before any is (docs/architecture/audit.md, "An entry
 * before its effect"): its entry is written between the two. The ledger still checks each
 * move as it is made.
 */
async function planRetry(
  ledger: Ledger,
  campaign: string,
  options: RetryOptions & { statuses: string[] },
): Promise<RetryPlan> {
  const repeats = options.newKey ? await repeatCheck(ledger, campaign, options) : undefined;
  const plan: RetryPlan = { moves: [], unclear: 0, repeats: 0 };
  try {
    for await (const [number, order] of ledger.orders.all(campaign)) {
      const checked = options.includeUncertain;
      const absent = Boolean(options.newKey && !checked && reconciledAbsent(order));
      if (!options.statuses.includes(order.status) && !absent) continue;
      // REKEY refuses it without a clearance (src/ledger/lua/rekey.lua): not planned.
      if (options.newKey && !checked && !absent && order.unclear) {
        plan.unclear += 1;
        continue;
      }
      const marks = repeats ? await repeats.marks(order.identities) : [];
      if (marks.length > 0 && !options.allowRepeats) plan.repeats += 1;
      else plan.moves.push({ number, order, absent, marks });
    }
  } finally {
    await repeats?.finder.release();
  }
  return plan;
}

/** What the retry will have done if the ledger takes every move planned. */
function plannedResult(base: RetryResult, plan: RetryPlan): RetryResult {
  const repeated: Record<string, number> = {};
  for (const move of plan.moves) countRepeated(repeated, move.marks);
  return {
    ...base,
    orders: plan.moves.length,
    rows: plan.moves.reduce((sum, move) => sum + move.order.identities.length, 0),
    unclear: plan.unclear,
    absent: plan.moves.filter((move) => move.absent).length,
    ...(plan.repeats > 0 ? { repeats: plan.repeats } : {}),
    ...(Object.keys(repeated).length > 0 ? { repeated } : {}),
  };
}

function countRepeated(repeated: Record<string, number>, marks: readonly RepeatMark[]): void {
  for (const mark of marks)
    for (const earlier of new Set(mark.earlier.map((row) => row.campaign)))
      repeated[earlier] = (repeated[earlier] ?? 0) + 1;
}

/**
 * Why a retry did less than its plan (its entry, written first, said the plan), or undefined:
 * the reason of its second entry, `refused`.
 */
export function retryShortfall(plan: RetryResult, done: RetryResult): string | undefined {
  const refused = plan.orders - done.orders;
  if (refused <= 0) return undefined;
  return `${refused} of the ${plan.orders} orders planned were not re-queued: each changed after the check (the ledger refused the move)`;
}

/** A row of an order to move on that repeats earlier rows of other campaigns, and its row. */
interface RepeatMark {
  identity: string;
  row: LedgerRow;
  earlier: EarlierRow[];
}

/** The rows, each naming the earlier rows it pays again. */
function marked(marks: readonly RepeatMark[]): [string, LedgerRow][] {
  return marks.map((m) => [m.identity, { ...m.row, repeat_of: repeatOf(m.earlier) }]);
}

/** The rows as read (an import with --allow-repeats may have marked them already). */
function unmarked(marks: readonly RepeatMark[]): [string, LedgerRow][] {
  return marks.map((m) => [m.identity, m.row]);
}

async function underSameKey(
  ledger: Ledger,
  campaign: string,
  { number, anyApiKey }: { number: number; anyApiKey: boolean | undefined },
): Promise<boolean> {
  const moved = await ledger.orders.transition({
    campaign,
    number,
    from: ["failed_uncertain"],
    to: "queued",
    patch: { error_type: null, error_message: null },
    follow: "pending",
    // The operator checked the service's orders: the unclear attempt's API key goes, so START
    // sends the order under the API key of now (see TRANSITION's `clearance`).
    clearance: anyApiKey ? "force" : undefined,
  });
  return moved.moved;
}

async function underNewKey(
  ledger: Ledger,
  campaign: string,
  number: number,
  order: { generation: number; identities: string[] },
  options: RetryOptions & { absent: boolean; journal: OrderJournal | undefined },
): Promise<boolean | "unclear"> {
  const generation = order.generation + 1;
  const key = orderKey(campaign, generation, order.identities);
  const line = { g: generation, k: key, i: [...order.identities].sort() };
  // The line first, the ledger after, and the line voided if REKEY refuses, rather than the line
  // written once REKEY is done: from the moment REKEY puts the new order on the pending list a
  // dispatcher may send its key, before a line written after would land, or in place of one never
  // written (this process dies), and a generation change must be journaled before its new key can
  // be sent (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist").
  await options.journal!.append(campaign, [options.apiKey ? { ...line, a: options.apiKey } : line]);
  const from: RowStatus[] = options.absent
    ? ["failed_uncertain"]
    : options.includeUncertain
      ? ["failed_final", "failed_uncertain"]
      : ["failed_final"];
  const clearance: KeyClearance | undefined = options.includeUncertain
    ? "force"
    : options.absent
      ? "absent"
      : undefined;
  const done = await ledger.orders.rekey({
    campaign,
    number,
    key,
    identities: order.identities,
    generation,
    from,
    clearance,
  });
  if (done.done) return true;
  // Refused (the order moved meanwhile, or carries the mark of an unclear attempt): the ledger
  // never held the key, so nothing sent it, and a re-import after a lost ledger must not rebuild
  // the rows under it. An error of REKEY itself (Redis gone mid-call) may have come after the
  // script ran: the line stays then.
  await options.journal!.voidChange(campaign, line);
  return done.why === "unclear" ? "unclear" : false;
}

/**
 * The rows of an order that repeat rows another campaign recorded and did not end with nothing
 * made, with those rows: a failed_final row's person may have been paid since by another
 * campaign (imported while nothing was made here), and a new key would pay them again
 * (docs/architecture/repeats.md, "Retries"). Undefined without a paid memory; else `marks`
 * answers for an order, and `finder` is released once the plan is made.
 */
async function repeatCheck(
  ledger: Ledger,
  campaign: string,
  options: RetryOptions,
): Promise<
  { finder: RepeatFinder; marks: (identities: string[]) => Promise<RepeatMark[]> } | undefined
> {
  const memory = options.stores?.paidMemory;
  if (!memory) return undefined;
  const since = Date.now() - (options.repeatWindowDays ?? REPEAT_WINDOW_DAYS) * 86_400_000;
  const finder = new RepeatFinder(
    await memory.lookup(campaign, since),
    ledger,
    options.stores?.dataDir,
  );
  const marks = async (identities: string[]) => {
    const rows = await ledger.orders.getRows(campaign, identities);
    const fingerprints = rows.map((row) => row && paidFingerprint(row, row.currency));
    const found = await finder.find(fingerprints);
    return identities.flatMap((identity, i) => {
      const row = rows[i];
      const earlier = found[i] ?? [];
      return row && earlier.length > 0 ? [{ identity, row, earlier }] : [];
    });
  };
  return { finder, marks };
}
