import type { ExecutionMode } from "../api/order-request.js";
import type { DailyLimit } from "../daily-limit.js";
import { unusualCurrencyDecimals } from "../money.js";
import {
  decodeOrder,
  decodeRow,
  encodeOrderFields,
  encodeRow,
  orderStatus,
  rowOrder,
} from "./codec.js";
import { dailySpendKey, startLimitArgs } from "./daily-limit.js";
import {
  decodeRecord,
  decodeRekey,
  decodeReleaseRow,
  decodeStart,
  decodeTransition,
  type TransitionReply,
} from "./order-replies.js";
import { type EncodedRecord, encodeRecord } from "./record-argument.js";
import { BudgetExceededError, CampaignClosedError, RecordFencedError } from "./record-errors.js";
import type { RowStatus } from "./row-status.js";
import { followMember, type LedgerStore } from "./store.js";
import type {
  FollowChange,
  KeyClearance,
  LedgerOrder,
  LedgerRow,
  NewOrder,
  OrderPatch,
  ReportedEnd,
  StartResult,
} from "./types.js";

type TransitionResult =
  /** `status`: the one reached (failed_uncertain instead of failed_final or cancelled while the
   * order carries the mark of an unclear attempt). */
  { moved: true; previous: string; status: RowStatus } | { moved: false; current: string | null };

const DECIMALS = unusualCurrencyDecimals();

/** A move of one order (see LedgerOrders.transition). */
export interface TransitionOptions {
  campaign: string;
  number: number;
  /** The statuses it moves from ("*": any). */
  from: readonly (RowStatus | "*")[];
  to: RowStatus;
  /** Fields to set; null removes one (never the mark of an unclear attempt: see `clearance`). */
  patch?: OrderPatch;
  /** The change of its entry in the follow set, made in the same step. */
  follow?: FollowChange;
  /** What clears an order marked unclear to move on (see KeyClearance). */
  clearance?: KeyClearance;
  /**
   * The order-id index of webhooks (OrderIndex.key): with `follow`, the patch's `order_id` is
   * indexed to this order in the same script, before the move (docs/architecture/webhooks.md).
   */
  index?: string;
}

/** What TRANSITION is given beyond a move: the checks of endReported and noteAbsent. */
interface TransitionRun extends TransitionOptions {
  orderId?: string;
  indexKey?: string;
  /** Moves only if the order's `updated_at` is still this. */
  ifUpdatedAt?: string;
  /** When the service made the order (ISO): made before the campaign, it is a replay. */
  madeAt?: string;
}

/** Fields an HMGET asks for at most (LedgerOrders.hmgetMany). */
const HMGET_CHUNK = 10_000;

/**
 * The ledger's orders and rows: reading them, recording new ones, and every change of an
 * order's status (start, transition, rekey, release), each in one script.
 */
export class LedgerOrders {
  constructor(private readonly store: LedgerStore) {}

  /** Rows of these identities, in the same order (undefined where unknown). */
  async getRows(campaign: string, identities: string[]): Promise<(LedgerRow | undefined)[]> {
    if (identities.length === 0) return [];
    const raw = await this.store.redis.hmget(this.store.keys(campaign).rows, ...identities);
    return raw.map((r) => (r ? decodeRow(r) : undefined));
  }

  /**
   * Writes rows back as given, for `orders retry --new-key --allow-repeats`, which sets their
   * `repeat_of` (docs/architecture/repeats.md, "Retries"). Only for rows of an order that ended
   * with nothing made (failed_final, or failed_uncertain found absent), which no worker writes:
   * written back, not in a script.
   */
  async putRows(campaign: string, rows: readonly (readonly [string, LedgerRow])[]): Promise<void> {
    if (rows.length === 0) return;
    const fields = rows.flatMap(([identity, row]) => [identity, encodeRow(row)]);
    await this.store.redis.hset(this.store.keys(campaign).rows, ...fields);
  }

  /**
   * The status of each row's order (undefined where the row is unknown, "unknown" where its order
   * is): what the repeats check asks of an earlier campaign, a row of a repeated sheet at a
   * time, without decoding its rows and orders whole.
   */
  async rowStatuses(campaign: string, identities: string[]): Promise<(string | undefined)[]> {
    if (identities.length === 0) return [];
    const keys = this.store.keys(campaign);
    const rows = await this.hmgetMany(keys.rows, identities);
    const numbers = rows.map((r) => (r ? rowOrder(r) : undefined));
    const distinct = [...new Set(numbers.filter((n): n is number => n !== undefined))];
    if (distinct.length === 0) return numbers.map(() => undefined);
    const orders = await this.hmgetMany(keys.orders, distinct.map(String));
    const status = new Map(
      distinct.map((n, i) => [n, orders[i] ? orderStatus(orders[i]) : "unknown"]),
    );
    return numbers.map((n) => (n === undefined ? undefined : status.get(n)));
  }

  /**
   * HMGET of any number of fields, HMGET_CHUNK a command (sent together): a batch whose rows
   * repeat many earlier rows asks of a great many, and one spread of them all into a call
   * overflows the stack.
   */
  private async hmgetMany(key: string, fields: string[]): Promise<(string | null)[]> {
    if (fields.length <= HMGET_CHUNK) return this.store.redis.hmget(key, ...fields);
    const chunks: Promise<(string | null)[]>[] = [];
    for (let i = 0; i < fields.length; i += HMGET_CHUNK)
      chunks.push(this.store.redis.hmget(key, ...fields.slice(i, i + HMGET_CHUNK)));
    return (await Promise.all(chunks)).flat();
  }

  async getOrder(campaign: string, number: number): Promise<LedgerOrder | undefined> {
    const raw = await this.store.redis.hget(this.store.keys(campaign).orders, String(number));
    return raw ? decodeOrder(raw, { campaign }) : undefined;
  }

  async getOrders(campaign: string, numbers: number[]): Promise<(LedgerOrder | undefined)[]> {
    if (numbers.length === 0) return [];
    const raw = await this.store.redis.hmget(
      this.store.keys(campaign).orders,
      ...numbers.map(String),
    );
    return raw.map((r) => (r ? decodeOrder(r, { campaign }) : undefined));
  }

  /**
   * Records new orders (queued) with their rows, numbering the orders; an order any of whose
   * rows is recorded already is left out with its rows (see RECORD). Returns the rows added and
   * left out, and the orders added. Throws, having written nothing, a BudgetExceededError when the new orders would
   * take a currency's planned price over the campaign's budget, a CampaignClosedError when the
   * campaign is cancelled or archived.
   */
  async record(
    campaign: string,
    orders: NewOrder[],
    /** The campaign's mode as stored, when the caller read it already (an import, once). */
    campaignMode?: ExecutionMode | null,
  ): Promise<{ added: number; leftOut: number; orders: number }> {
    // The campaign's mode, which its orders need not repeat: its first import's, never changed
    // after (`register` keeps it), so an order recorded without it reads it from there.
    const mode =
      campaignMode !== undefined
        ? campaignMode
        : ((await this.store.redis.hget(
            this.store.keys(campaign).meta,
            "execution_mode",
          )) as ExecutionMode | null);
    return this.recordEncoded(encodeRecord(campaign, orders, mode));
  }

  /**
   * `record` of orders encoded before (encodeRecord): an import encodes a batch while the one
   * before it is being recorded, so that Redis's turn is all a batch waits for.
   */
  async recordEncoded(
    encoded: EncodedRecord,
  ): Promise<{ added: number; leftOut: number; orders: number }> {
    const { campaign } = encoded;
    const keys = this.store.keys(campaign);
    const reply = await this.store.run(
      "giftjobsLedgerRecord",
      [
        keys.orders,
        keys.rows,
        keys.counts,
        keys.pending,
        keys.meta,
        keys.scheduled,
        this.store.runningKey(),
        ...(encoded.fence ? [this.store.fenceKey(campaign, encoded.fence)] : []),
      ],
      encoded.args,
    );
    const answer = decodeRecord(reply);
    if (answer.kind === "fenced") throw new RecordFencedError(campaign);
    if (answer.kind === "recorded") {
      const { added, leftOut, orders: ordersAdded } = answer;
      return { added, leftOut, orders: ordersAdded };
    }
    if (answer.kind === "not_allowed") throw new CampaignClosedError(campaign, answer.state);
    const { currency, planned, adding, budget } = answer;
    throw new BudgetExceededError(currency, planned, adding, budget);
  }

  /** Removes an import's fence (see RecordFence in record-argument.ts) once its batches are all answered. */
  async removeFence(campaign: string, id: string): Promise<void> {
    await this.store.redis.del(this.store.fenceKey(campaign, id));
  }

  /**
   * Starts an attempt in one round trip: unless the campaign is held, paused, cancelled or over
   * its budget in the order's currency (see START), moves the order to in_flight (from queued
   * or in_flight) and returns it with its rows. With `limit`, an order the daily limit stops is
   * not started (see START).
   */
  async start({
    campaign,
    number,
    patch,
    apiKeyFingerprint = "",
    limit,
  }: {
    campaign: string;
    number: number;
    patch: Partial<LedgerOrder>;
    /** The fingerprint of the API key the attempt is made with (see START). */
    apiKeyFingerprint?: string;
    /** The daily limit across campaigns, when one is set: an order it stops is not started. */
    limit?: DailyLimit;
  }): Promise<StartResult> {
    const k = this.store.keys(campaign);
    const now = new Date().toISOString();
    const args = {
      number: String(number),
      patch: encodeOrderFields({ ...patch, updated_at: now }),
      now,
      decimals: DECIMALS,
      ...(apiKeyFingerprint ? { api_key: apiKeyFingerprint } : {}),
      ...startLimitArgs(limit),
    };
    const keys = [
      k.orders,
      k.rows,
      k.counts,
      k.meta,
      k.window,
      k.pending,
      this.store.endedKey(),
      dailySpendKey(this.store.prefix),
    ];
    const reply = await this.store.run("giftjobsLedgerStart", keys, [JSON.stringify(args)]);
    return decodeStart(reply, { campaign, limit });
  }

  /**
   * Moves an order and its rows to `to` when its status is one of `from`, and with `follow`
   * changes its entry in the follow set in the same step.
   */
  async transition(move: TransitionOptions): Promise<TransitionResult> {
    const reply = await this.runTransition(move);
    if (reply.kind === "moved")
      return { moved: true, previous: reply.previous, status: reply.status };
    return { moved: false, current: reply.kind === "unknown" ? null : reply.current };
  }

  /**
   * Ends a `submitted` order as the service reported it (a poll, a webhook): only when the order
   * holds `orderId`, unfollowed in the same step, and with `indexKey` (the order-id index of
   * webhooks) the id's entry removed once the order is past `submitted` under it or gone: one
   * script, so a webhook costs a claim and this (docs/architecture/webhooks.md, "Webhooks").
   * With `madeAt` (when the service made the order), the script marks it replayed when it was
   * made before the campaign's `created_at` as Redis holds it then (see TRANSITION).
   */
  async endReported(end: {
    campaign: string;
    number: number;
    to: RowStatus;
    patch: OrderPatch;
    orderId: string;
    indexKey?: string;
    madeAt?: string;
  }): Promise<ReportedEnd> {
    const reply = await this.runTransition({
      ...end,
      from: ["submitted"],
      follow: "unfollow",
      clearance: "answered",
    });
    switch (reply.kind) {
      case "moved":
        return { kind: "moved", status: reply.status, replayed: reply.replayed };
      case "other_order_id":
        return { kind: "mismatch", status: reply.current, heldId: reply.orderId || undefined };
      case "no_order_id":
        return { kind: "not-yet", status: reply.current };
      case "unknown":
        return { kind: "gone" };
      default:
        return { kind: "past", status: reply.current };
    }
  }

  private async runTransition(run: TransitionRun): Promise<TransitionReply> {
    const now = new Date().toISOString();
    const patch = encodeOrderFields({ ...run.patch, updated_at: now } as Partial<LedgerOrder>);
    const k = this.store.keys(run.campaign);
    const keys = [
      k.orders,
      k.rows,
      k.counts,
      this.store.followKey(),
      k.meta,
      k.window,
      k.pending,
      this.store.runningKey(),
      this.store.endedKey(),
      k.minutes,
      dailySpendKey(this.store.prefix),
    ];
    const args = transitionArgs(run, patch, now);
    const indexKey = run.indexKey ?? (args.index_id ? run.index : undefined);
    if (indexKey) keys.push(indexKey);
    const reply = await this.store.run("giftjobsLedgerTransition", keys, [JSON.stringify(args)]);
    return decodeTransition(reply);
  }

  /**
   * Records that `orders reconcile` found no order of this failed_uncertain one on the service
   * (`listedAt`: when its listing began; `apiKey`: the fingerprint it listed with), unless the
   * order changed since it was read (`seenUpdatedAt`): an attempt made since could have made
   * one. True when recorded. See docs/architecture/keys-and-exactly-once.md, "Reconciling with
   * the service".
   */
  async noteAbsent(seen: {
    campaign: string;
    number: number;
    updatedAt: string;
    listedAt: string;
    apiKey: string;
  }): Promise<boolean> {
    const reply = await this.runTransition({
      campaign: seen.campaign,
      number: seen.number,
      from: ["failed_uncertain"],
      to: "failed_uncertain",
      patch: { reconciled_absent_at: seen.listedAt, reconciled_api_key: seen.apiKey },
      ifUpdatedAt: seen.updatedAt,
    });
    return reply.kind === "moved";
  }

  /**
   * Moves `identities` of order `from.number` to a new order of generation `generation`
   * (queued) under `key`, numbered next. The rows left behind take `restStatus` and
   * `restPatch`. Only from `from` statuses, and, when the order carries the mark of an unclear
   * attempt, only with a `clearance` (see KeyClearance): otherwise `why` is "unclear". Returns the new
   * order's number when done.
   */
  async rekey(args: {
    campaign: string;
    number: number;
    key: string;
    identities: string[];
    generation: number;
    from: readonly RowStatus[];
    restStatus?: RowStatus;
    restPatch?: OrderPatch;
    clearance?: KeyClearance;
  }): Promise<
    { done: true; number: number } | { done: false; why: "not-allowed" | "unknown" | "unclear" }
  > {
    const k = this.store.keys(args.campaign);
    const keys = [
      k.orders,
      k.rows,
      k.counts,
      k.window,
      k.pending,
      k.meta,
      this.store.runningKey(),
      this.store.endedKey(),
    ];
    const restPatch = { ...args.restPatch, updated_at: new Date().toISOString() };
    const fields = {
      number: String(args.number),
      key: args.key,
      identities: args.identities,
      generation: args.generation,
      rest_status: args.restStatus ?? "failed_final",
      rest_patch: encodeOrderFields(restPatch as Partial<LedgerOrder>),
      from: args.from.join(","),
      campaign: args.campaign,
      clearance: args.clearance,
    };
    const reply = await this.store.run("giftjobsLedgerRekey", keys, [JSON.stringify(fields)]);
    return decodeRekey(reply);
  }

  /** Takes a failed_final row out so its changed content can be recorded again. */
  async releaseRow(
    campaign: string,
    identity: string,
  ): Promise<{ released: true; generation: number } | { released: false; status: string }> {
    const k = this.store.keys(campaign);
    const reply = await this.store.run(
      "giftjobsLedgerReleaseRow",
      [k.orders, k.rows, k.counts],
      [JSON.stringify({ identity })],
    );
    return decodeReleaseRow(reply);
  }

  /**
   * Takes the orders that reached an end since the last claim, by end, whichever process moved
   * them (a worker, the webhook receiver, the cancel command...): one metrics endpoint counts
   * each once (the read and the delete are one MULTI; a count after it starts anew). The
   * cancelled orders counted under the older key are taken too.
   */
  async claimEnded(): Promise<Record<string, number>> {
    const answers = await this.store.redis
      .multi()
      .hgetall(this.store.endedKey())
      .del(this.store.endedKey())
      .getdel(this.store.legacyCancelledKey())
      .exec();
    const [ended, , legacy] = (answers ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const out: Record<string, number> = {};
    for (const [end, n] of Object.entries((ended ?? {}) as Record<string, string>))
      out[end] = Number(n);
    if (legacy) out.cancelled = (out.cancelled ?? 0) + Number(legacy);
    return out;
  }

  /** Every order of the campaign with its number, in pages (HSCAN: no whole-campaign load). */
  async *all(campaign: string): AsyncGenerator<[number, LedgerOrder]> {
    for await (const [n, text] of this.scanHash(this.store.keys(campaign).orders))
      yield [Number(n), decodeOrder(text, { campaign })];
  }

  async *rows(campaign: string): AsyncGenerator<[string, LedgerRow]> {
    for await (const [identity, text] of this.scanHash(this.store.keys(campaign).rows))
      yield [identity, decodeRow(text)];
  }

  private async *scanHash(key: string): AsyncGenerator<[string, string]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.store.redis.hscan(key, cursor, "COUNT", 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) yield [flat[i] as string, flat[i + 1] as string];
    } while (cursor !== "0");
  }
}

/** TRANSITION's named fields (see its header) for a run. */
function transitionArgs(run: TransitionRun, patch: Record<string, unknown>, now: string) {
  const { campaign, number, follow } = run;
  const member = followMember(campaign, number);
  // Indexed only with a follow-set member to map the id to.
  const indexed = run.index && follow && follow !== "unfollow" && follow !== "pending";
  return {
    number: String(number),
    from: run.from.join(","),
    to: run.to,
    patch,
    now,
    ...(follow === "unfollow" ? { follow, member } : {}),
    ...(follow === "pending" ? { follow, campaign } : {}),
    ...(typeof follow === "object" ? { follow: "follow", at: String(follow.at), member } : {}),
    clearance: run.clearance,
    order_id: run.orderId,
    if_updated_at: run.ifUpdatedAt,
    index_id: indexed ? (run.patch?.order_id ?? undefined) : undefined,
    made_at: run.madeAt,
  };
}
