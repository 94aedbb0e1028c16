import type { Redis } from "ioredis";
import { unusualCurrencyDecimals } from "../money.js";
import { redisKey } from "../redis/redis-key.js";
import {
  decodeOrder,
  decodeRow,
  encodeOrder,
  encodeOrderFields,
  encodeRow,
  rowTail,
} from "./codec.js";
import { ROW_STATUSES, type RowStatus } from "./row-status.js";
import {
  ARCHIVE,
  CANCEL_PENDING,
  CLAIM_FOLLOWED,
  CLEAR_ARCHIVED,
  DISPATCH,
  FINISH_RESTORE,
  RECORD,
  REKEY,
  RELEASE_ROW,
  SET_STATE,
  START,
  TRANSITION,
} from "./scripts.js";
import type { LedgerOrder, LedgerRow } from "./types.js";

export type { LedgerOrder, LedgerRow } from "./types.js";

/** The states a campaign is stored in; `done` is derived (see campaign-state.ts). */
export const STORED_STATES = ["held", "running", "paused", "cancelled", "archived"] as const;
export type StoredState = (typeof STORED_STATES)[number];

export interface CampaignMeta {
  execution_mode?: "async" | "sync";
  items_per_order?: string;
  created_at?: string;
  /** Absent on a campaign recorded before states existed: running. */
  state?: StoredState;
  approved_at?: string;
  paused_reason?: string;
  paused_at?: string;
  cancelled_at?: string;
  finished_at?: string;
  archived_at?: string;
  /** An archived campaign's archive folder (see campaign-archive.ts). */
  archive_path?: string;
  /** JSON: attempts and backoff of the campaign's order jobs. */
  job_options?: string;
  /**
   * `spent:CUR`: price of completed orders; `uncertain:CUR`: of failed_uncertain ones (an order
   * may exist); `planned_rows:CUR`, `planned_face:CUR`,
   * `planned_price:CUR`: what was recorded; `budget:CUR`: the most the planned price may reach
   * (RECORD refuses more; START pauses the campaign when it is over). Money in minor units, as
   * strings.
   */
  [
    money: `${"spent" | "uncertain" | "planned_rows" | "planned_face" | "planned_price" | "budget"}:${string}`
  ]: string | undefined;
}

/** Rows per status; `scheduled`: queued rows whose send_at is still ahead. */
export type CampaignCounts = Record<RowStatus, number> & {
  total: number;
  replayed: number;
  scheduled: number;
};

/** A change of an order's fields; null removes one (an error cleared by a retry, say). */
export type OrderPatch = { [F in keyof LedgerOrder]?: LedgerOrder[F] | null };

/** An order to record, with its rows (each row's order number is given by the ledger). */
export interface NewOrder {
  order: LedgerOrder;
  rows: [identity: string, row: Omit<LedgerRow, "order">][];
}

type TransitionResult =
  /** `status`: the one reached (failed_uncertain instead of failed_final or cancelled while the
   * order carries the mark of an unclear attempt). */
  { moved: true; previous: string; status: RowStatus } | { moved: false; current: string | null };

/** What endReported found: the order moved, or why not (see TRANSITION). */
export type ReportedEnd =
  | { kind: "moved"; status: RowStatus }
  /** Past `submitted` already (a poll and a webhook raced): ended once, by the other. */
  | { kind: "past"; status: string }
  /** The ledger holds another order id for it (`heldId`): not this order's end. */
  | { kind: "mismatch"; status: string; heldId: string | undefined }
  /** Queued or in flight: its order id is not recorded yet (a webhook that beat the worker). */
  | { kind: "not-yet"; status: string }
  /** Unknown or superseded. */
  | { kind: "gone" };

/**
 * What the service's answer says of an order's key (docs/architecture.md, "One key while an order
 * may exist"): `answered` when it answered under the key (the mark of an unclear attempt goes),
 * `force` when the operator checked and sends it under another API key anyway.
 */
export type KeyWord = "answered" | "force";

const DECIMALS = JSON.stringify(unusualCurrencyDecimals());

const SCRIPTS = {
  giftjobsLedgerRecord: RECORD,
  giftjobsLedgerTransition: TRANSITION,
  giftjobsLedgerRekey: REKEY,
  giftjobsLedgerReleaseRow: RELEASE_ROW,
  giftjobsLedgerStart: START,
  giftjobsLedgerClaimFollowed: CLAIM_FOLLOWED,
  giftjobsLedgerDispatch: DISPATCH,
  giftjobsLedgerSetState: SET_STATE,
  giftjobsLedgerCancelPending: CANCEL_PENDING,
  giftjobsLedgerArchive: ARCHIVE,
  giftjobsLedgerClearArchived: CLEAR_ARCHIVED,
  giftjobsLedgerFinishRestore: FINISH_RESTORE,
};

/**
 * What an archive must find unchanged before the campaign's data is removed: its meta and
 * counts hashes as stored, and how many rows and orders it holds.
 */
export interface CampaignShape {
  meta: Record<string, string>;
  counts: Record<string, string>;
  rows: number;
  orders: number;
}

/** What a transition does to the order's entry in the follow set (see OrderFollower). */
export type FollowChange = { at: number } | "unfollow" | "pending";

/** A followed order taken by a follower: where it is, and the ledger's record of it. */
export interface FollowedOrder {
  campaign: string;
  /** The order's number in its campaign. */
  number: number;
  order: LedgerOrder | undefined;
}

/**
 * What starting an attempt found: paused (`budget` when this start paused it: its currency's
 * planned price is over the budget), started (with the order and its rows), or past it.
 */
export type StartResult =
  | { kind: "paused"; reason: string; budget?: true }
  | {
      kind: "started";
      order: LedgerOrder;
      /** The order's rows, in its order (undefined where one is missing). */
      rows: (LedgerRow | undefined)[];
      /** When the campaign was first imported (ISO), to tell a replayed order. */
      campaignCreatedAt: string | undefined;
    }
  | { kind: "past"; status: string | null }
  /** Not sent: an earlier attempt ended unclear under another API key (`mark`: its error type). */
  | { kind: "other-api-key"; mark: string };

/** The counts hash as numbers (absent fields are 0). */
export function countsOf(raw: Record<string, string>): CampaignCounts {
  const counts = {
    total: Number(raw.total ?? 0),
    replayed: Number(raw.replayed ?? 0),
    scheduled: Number(raw.scheduled ?? 0),
  } as CampaignCounts;
  for (const status of ROW_STATUSES) counts[status] = Number(raw[status] ?? 0);
  return counts;
}

/** A follow-set member: campaign names hold no space. */
function followMember(campaign: string, number: number | "*"): string {
  return `${campaign} ${number}`;
}

/** RECORD refused a batch: its new orders would take a currency's planned price over the budget. */
export class BudgetExceededError extends Error {
  override readonly name = "BudgetExceededError";
  constructor(
    readonly currency: string,
    /** Minor units: planned before the batch, the batch's new orders, the budget. */
    readonly planned: bigint,
    readonly batch: bigint,
    readonly budget: bigint,
  ) {
    super(
      `${currency}: planned ${planned} + ${batch} is over the budget of ${budget} (minor units)`,
    );
  }
}

/** RECORD refused a batch: the campaign is cancelled or archived. */
export class CampaignClosedError extends Error {
  override readonly name = "CampaignClosedError";
  constructor(
    readonly campaign: string,
    readonly state: StoredState,
  ) {
    super(`campaign ${campaign} is ${state}: no rows can be added to it`);
  }
}

/** Campaign names are part of Redis keys and file names: keep them plain. */
export const CAMPAIGN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The campaign ledger in Redis: per campaign a `rows` hash (identity -> row), an `orders` hash
 * (order key -> order), a `counts` hash (rows per status) and a `meta` hash. Every change of
 * status goes through a Lua script so counts are exact under concurrency.
 */
export class Ledger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    // Defined once per connection: ioredis then sends EVALSHA, not the script text each call.
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
  }

  private script(name: keyof typeof SCRIPTS, keys: string[], args: string[]): Promise<unknown> {
    const command = (
      this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>
    )[name]!;
    return command.call(this.redis, keys.length, ...keys, ...args);
  }

  keys(campaign: string) {
    const base = redisKey(this.prefix, "campaign", campaign);
    return {
      orders: `${base}:orders`,
      rows: `${base}:rows`,
      counts: `${base}:counts`,
      meta: `${base}:meta`,
      /** Numbers of orders recorded queued and not yet handed to BullMQ, in sending order. */
      pending: `${base}:pending`,
      /** Numbers of orders handed to BullMQ whose job is not over: at most the dispatch window. */
      window: `${base}:window`,
      /** Numbers of orders whose rows have a send_at still ahead, scored by it (ms). */
      scheduled: `${base}:scheduled`,
    };
  }

  /**
   * Orders cancelled and not yet counted by a metrics endpoint (every process that cancels adds
   * to it in the cancelling script; see claimCancelledOrders).
   */
  cancelledKey(): string {
    return redisKey(this.prefix, "orders-cancelled");
  }

  /**
   * Takes the orders cancelled since the last claim, whichever process cancelled them: one
   * metrics endpoint counts each once (GETDEL is atomic; an INCR after it starts anew).
   */
  async claimCancelledOrders(): Promise<number> {
    return Number((await this.redis.getdel(this.cancelledKey())) ?? 0);
  }

  /** Campaigns whose state is running: the dispatcher's list. */
  runningKey(): string {
    return redisKey(this.prefix, "running");
  }

  private scriptKeys(campaign: string): [string, string, string] {
    const k = this.keys(campaign);
    return [k.orders, k.rows, k.counts];
  }

  async campaigns(): Promise<string[]> {
    return (await this.redis.smembers(redisKey(this.prefix, "campaigns"))).sort();
  }

  async exists(campaign: string): Promise<boolean> {
    return (await this.redis.sismember(redisKey(this.prefix, "campaigns"), campaign)) === 1;
  }

  /**
   * Registers a campaign; settings recorded by its first import are kept (the state too: a
   * later import changes it only through setState). A new campaign that is to run at once is
   * in the running set from the start.
   */
  async register(campaign: string, meta: CampaignMeta): Promise<void> {
    const k = this.keys(campaign);
    const tx = this.redis.multi().sadd(redisKey(this.prefix, "campaigns"), campaign);
    tx.hsetnx(k.meta, "created_at", new Date().toISOString());
    for (const [field, value] of Object.entries(meta))
      if (value !== undefined) tx.hsetnx(k.meta, field, String(value));
    await tx.exec();
    await this.ensureDispatched(campaign);
  }

  /**
   * Puts a running campaign in the dispatcher's running set (a campaign recorded before
   * states existed has no state, and counts as running). Harmless when it is not running: the
   * dispatcher drops a campaign whose state is not running.
   */
  async ensureDispatched(campaign: string): Promise<void> {
    const state = await this.redis.hget(this.keys(campaign).meta, "state");
    if ((state ?? "running") === "running") await this.redis.sadd(this.runningKey(), campaign);
  }

  async meta(campaign: string): Promise<CampaignMeta> {
    return (await this.redis.hgetall(this.keys(campaign).meta)) as CampaignMeta;
  }

  /** Sets fields of the campaign's meta (not its state: see setState). */
  async setMeta(campaign: string, fields: Record<string, string>): Promise<void> {
    if ("state" in fields) throw new Error("the state changes through setState");
    await this.redis.hset(this.keys(campaign).meta, fields);
  }

  /** Removes fields of the campaign's meta (not its state). */
  async clearMeta(campaign: string, ...fields: string[]): Promise<void> {
    if (fields.includes("state")) throw new Error("the state changes through setState");
    await this.redis.hdel(this.keys(campaign).meta, ...fields);
  }

  /**
   * Moves the campaign to `state` if its current state is one of `from` ("*": any), setting
   * `fields` with it, and keeps the dispatcher's running set in step, in one script.
   */
  async setState(
    campaign: string,
    state: StoredState,
    from: readonly (StoredState | "*")[],
    fields: Record<string, string> = {},
  ): Promise<{ changed: boolean; previous: StoredState }> {
    const [code, previous] = (await this.script(
      "giftjobsLedgerSetState",
      [this.keys(campaign).meta, this.runningKey()],
      [state, from.join(","), campaign, ...Object.entries(fields).flat()],
    )) as [number, StoredState];
    return { changed: code === 1, previous };
  }

  /** Pauses a running campaign (an operator, or a worker after a systemic refusal). */
  async pause(campaign: string, reason: string): Promise<boolean> {
    const now = new Date().toISOString();
    const result = await this.setState(campaign, "paused", ["running"], {
      paused_reason: reason,
      paused_at: now,
    });
    return result.changed;
  }

  /** Resumes a paused campaign; returns false when it was not paused. */
  async resume(campaign: string): Promise<boolean> {
    return (await this.setState(campaign, "running", ["paused"])).changed;
  }

  async pausedReason(campaign: string): Promise<string | null> {
    return this.redis.hget(this.keys(campaign).meta, "paused_reason");
  }

  /**
   * Hands orders of running campaigns to the dispatcher: the campaigns with work share
   * `budget` jobs in BullMQ, an equal window each of at least `least` (see DISPATCH). Returns
   * the orders now handed out, in the order their jobs are to be added.
   */
  async dispatch(budget: number, least = 4): Promise<{ campaign: string; number: number }[]> {
    // Read first so that the script is given every key it touches (see DISPATCH).
    const running = await this.redis.smembers(this.runningKey());
    if (running.length === 0) return [];
    const keys = [this.runningKey()];
    for (const campaign of running) {
      const k = this.keys(campaign);
      keys.push(k.meta, k.pending, k.window, k.scheduled, k.orders, k.counts);
    }
    const flat = (await this.script("giftjobsLedgerDispatch", keys, [
      String(budget),
      String(least),
      String(Date.now()),
      ...running,
    ])) as (string | number)[];
    const out: { campaign: string; number: number }[] = [];
    for (let i = 0; i < flat.length; i += 2)
      out.push({ campaign: String(flat[i]), number: Number(flat[i + 1]) });
    return out;
  }

  /** Numbers of the orders in the campaign's dispatch window (handed to BullMQ, job not over). */
  async windowOrders(campaign: string): Promise<number[]> {
    return (await this.redis.smembers(this.keys(campaign).window)).map(Number);
  }

  /** Takes an order out of the window when it is past queued/in_flight (a lost job). */
  async leaveWindow(campaign: string, number: number): Promise<void> {
    await this.redis.srem(this.keys(campaign).window, String(number));
  }

  /** Bytes of Redis the campaign's keys take (MEMORY USAGE, sampled for large hashes). */
  async memoryUsage(campaign: string): Promise<number> {
    const keys = Object.values(this.keys(campaign));
    const sizes = await Promise.all(keys.map((key) => this.redis.memory("USAGE", key)));
    return sizes.reduce<number>((sum, n) => sum + Number(n ?? 0), 0);
  }

  /** The campaign as an archive sees it (see removeCampaignData). */
  async shape(campaign: string): Promise<CampaignShape> {
    const k = this.keys(campaign);
    // One transaction: the four answers describe one moment.
    const replies = await this.redis
      .multi()
      .hgetall(k.meta)
      .hgetall(k.counts)
      .hlen(k.rows)
      .hlen(k.orders)
      .exec();
    const values = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [meta, counts, rows, orders] = values as [
      Record<string, string>,
      Record<string, string>,
      number,
      number,
    ];
    return { meta, counts, rows, orders };
  }

  /**
   * Removes every key of an archived campaign but its tombstone (meta: state archived,
   * `archived_at`, `archive_path`; and counts), and takes it out of the running set, in one
   * script, provided it still has the shape `expected` (its archive was written from it). The
   * campaigns set keeps it. On a campaign archived already, removes data keys left behind.
   */
  async removeCampaignData(
    campaign: string,
    expected: CampaignShape,
    tombstone: { archivedAt: string; archivePath: string },
  ): Promise<{ outcome: "removed" | "already" } | { outcome: "changed"; why: string }> {
    const k = this.keys(campaign);
    const [code, why] = (await this.script(
      "giftjobsLedgerArchive",
      [k.meta, k.counts, k.rows, k.orders, k.pending, k.window, this.runningKey(), k.scheduled],
      [
        JSON.stringify(expected.meta),
        JSON.stringify(expected.counts),
        String(expected.rows),
        String(expected.orders),
        tombstone.archivedAt,
        tombstone.archivePath,
        campaign,
      ],
    )) as [number, string?];
    if (code === 1) return { outcome: "removed" };
    if (code === 2) return { outcome: "already" };
    return { outcome: "changed", why: why ?? "it changed" };
  }

  /** Empties the data keys of an archived campaign, for a restore. False when not archived. */
  async clearArchivedData(campaign: string): Promise<boolean> {
    const k = this.keys(campaign);
    return (
      Number(
        await this.script(
          "giftjobsLedgerClearArchived",
          [k.meta, k.rows, k.orders, k.pending, k.window, k.scheduled],
          [],
        ),
      ) === 1
    );
  }

  /**
   * Writes back rows and orders read from an archive. Only for a campaign being restored: its
   * tombstone keeps it archived until finishRestore.
   */
  async restoreEntries(
    campaign: string,
    entries: { rows: [string, LedgerRow][]; orders: [number, LedgerOrder][] },
  ): Promise<void> {
    const k = this.keys(campaign);
    const tx = this.redis.multi();
    if (entries.rows.length)
      tx.hset(k.rows, Object.fromEntries(entries.rows.map(([id, row]) => [id, encodeRow(row)])));
    if (entries.orders.length)
      tx.hset(
        k.orders,
        Object.fromEntries(entries.orders.map(([n, order]) => [String(n), encodeOrder(order)])),
      );
    await tx.exec();
  }

  /**
   * Ends a restore: meta and counts become `meta` and `counts` (as archived), and a running
   * campaign rejoins the running set, provided the tombstone is still the one of the archive
   * archived at `archivedAt` and the data keys hold what was `written` (nothing removed them
   * meanwhile).
   */
  async finishRestore(
    campaign: string,
    archivedAt: string,
    meta: Record<string, string>,
    counts: Record<string, string>,
    written: { rows: number; orders: number },
  ): Promise<{ restored: true; state: StoredState } | { restored: false; why: string }> {
    const k = this.keys(campaign);
    const [code, value] = (await this.script(
      "giftjobsLedgerFinishRestore",
      [k.meta, k.counts, this.runningKey(), k.rows, k.orders],
      [
        archivedAt,
        campaign,
        JSON.stringify(meta),
        JSON.stringify(counts),
        String(written.rows),
        String(written.orders),
      ],
    )) as [number, string];
    if (code === 1) return { restored: true, state: value as StoredState };
    return { restored: false, why: value };
  }

  /** Members of the follow set that belong to the campaign (none once it is done). */
  async followedOf(campaign: string): Promise<number> {
    let cursor = "0";
    let found = 0;
    do {
      const [next, flat] = await this.redis.zscan(
        this.followKey(),
        cursor,
        "MATCH",
        // Campaign names hold no glob characters (CAMPAIGN_NAME).
        `${followMember(campaign, "*")}`,
        "COUNT",
        1000,
      );
      cursor = next;
      found += flat.length / 2;
    } while (cursor !== "0");
    return found;
  }

  /** Orders waiting to be dispatched, now or when their send_at comes. */
  async pendingCount(campaign: string): Promise<number> {
    const k = this.keys(campaign);
    const [pending, scheduled] = await Promise.all([
      this.redis.llen(k.pending),
      this.redis.zcard(k.scheduled),
    ]);
    return pending + scheduled;
  }

  /** When the campaign's next scheduled order is due (ms), or undefined when none is. */
  async nextSendAt(campaign: string): Promise<number | undefined> {
    const [, score] = await this.redis.zrange(
      this.keys(campaign).scheduled,
      "0",
      "0",
      "WITHSCORES",
    );
    return score === undefined ? undefined : Number(score);
  }

  /**
   * Cancels the pending orders of a cancelled campaign, `batch` at a time, then the queued ones
   * in its window. Returns the number of pending orders taken.
   */
  async cancelPending(campaign: string, batch = 500): Promise<number> {
    const k = this.keys(campaign);
    let taken = 0;
    for (;;) {
      const n = Number(
        await this.script(
          "giftjobsLedgerCancelPending",
          [
            k.orders,
            k.rows,
            k.counts,
            k.pending,
            k.window,
            k.meta,
            k.scheduled,
            this.cancelledKey(),
          ],
          [String(batch), new Date().toISOString()],
        ),
      );
      taken += n;
      if (n === 0) return taken;
    }
  }

  /** Rows of these identities, in the same order (undefined where unknown). */
  async getRows(campaign: string, identities: string[]): Promise<(LedgerRow | undefined)[]> {
    if (identities.length === 0) return [];
    const raw = await this.redis.hmget(this.keys(campaign).rows, ...identities);
    return raw.map((r) => (r ? decodeRow(r) : undefined));
  }

  async getOrder(campaign: string, number: number): Promise<LedgerOrder | undefined> {
    const raw = await this.redis.hget(this.keys(campaign).orders, String(number));
    return raw ? decodeOrder(raw) : undefined;
  }

  async getOrders(campaign: string, numbers: number[]): Promise<(LedgerOrder | undefined)[]> {
    if (numbers.length === 0) return [];
    const raw = await this.redis.hmget(this.keys(campaign).orders, ...numbers.map(String));
    return raw.map((r) => (r ? decodeOrder(r) : undefined));
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
  ): Promise<{ added: number; leftOut: number; orders: number }> {
    const now = Date.now();
    const batch = orders.map(({ order, rows }) => [
      encodeOrder(order),
      order.status,
      order.currency ?? "",
      order.face ?? "",
      order.price ?? "",
      rows.map(([identity, row]) => [identity, row.line, rowTail(row)]),
      order.send_at !== undefined && order.send_at > now ? String(order.send_at) : "",
    ]);
    const keys = this.keys(campaign);
    const answer = (await this.script(
      "giftjobsLedgerRecord",
      [
        keys.orders,
        keys.rows,
        keys.counts,
        keys.pending,
        keys.meta,
        keys.scheduled,
        this.runningKey(),
      ],
      [JSON.stringify(batch), campaign],
    )) as [number, ...string[]];
    const [code, ...rest] = answer;
    if (code >= 0) return { added: code, leftOut: Number(rest[0]), orders: Number(rest[1]) };
    if (code === -1) throw new CampaignClosedError(campaign, rest[0] as StoredState);
    const [currency, planned, adding, budget] = rest as [string, string, string, string];
    throw new BudgetExceededError(currency, BigInt(planned), BigInt(adding), BigInt(budget));
  }

  /**
   * Starts an attempt in one round trip: unless the campaign is held, paused, cancelled or over
   * its budget in the order's currency (see START), moves the order to in_flight (from queued
   * or in_flight) and returns it with its rows.
   */
  async start(
    campaign: string,
    number: number,
    patch: Partial<LedgerOrder>,
    apiKeyFingerprint = "",
  ): Promise<StartResult> {
    const k = this.keys(campaign);
    const now = new Date().toISOString();
    const [code, a, b, c] = (await this.script(
      "giftjobsLedgerStart",
      [k.orders, k.rows, k.counts, k.meta, k.window, k.pending, this.cancelledKey()],
      [
        String(number),
        JSON.stringify(encodeOrderFields({ ...patch, updated_at: now })),
        now,
        DECIMALS,
        apiKeyFingerprint,
      ],
    )) as [number, string, (string | null)[]?, string?];
    if (code === 2) return { kind: "paused", reason: a };
    if (code === 4) return { kind: "other-api-key", mark: a };
    if (code === 3) return { kind: "paused", reason: a, budget: true };
    if (code === 1) {
      return {
        kind: "started",
        order: decodeOrder(a),
        rows: (b ?? []).map((r) => (r ? decodeRow(r) : undefined)),
        campaignCreatedAt: c || undefined,
      };
    }
    return { kind: "past", status: code === -1 ? null : a };
  }

  /**
   * Moves an order and its rows to `to` when its status is one of `from` ("*" for any), and
   * with `follow` changes its entry in the follow set in the same step. In `patch`, null
   * removes a field (never the mark of an unclear attempt: see `word`).
   */
  async transition(
    campaign: string,
    number: number,
    from: readonly (RowStatus | "*")[],
    to: RowStatus,
    patch: OrderPatch = {},
    follow?: FollowChange,
    word?: KeyWord,
  ): Promise<TransitionResult> {
    const [code, status, reached] = await this.runTransition(campaign, number, from, to, patch, {
      follow,
      word,
    });
    if (code === 1)
      return { moved: true, previous: status, status: (reached as RowStatus | undefined) ?? to };
    return { moved: false, current: code === -1 ? null : status };
  }

  /**
   * Ends a `submitted` order as the service reported it (a poll, a webhook): only when the order
   * holds `orderId`, unfollowed in the same step, and with `indexKey` (the order-id index of
   * webhooks) the id's entry removed once the order is past `submitted` under it or gone: one
   * script, so a webhook costs a claim and this (docs/architecture.md, "Webhooks").
   */
  async endReported(
    campaign: string,
    number: number,
    end: { to: RowStatus; patch: OrderPatch; orderId: string; indexKey?: string },
  ): Promise<ReportedEnd> {
    const [code, status, other] = await this.runTransition(
      campaign,
      number,
      ["submitted"],
      end.to,
      end.patch,
      { follow: "unfollow", word: "answered", orderId: end.orderId, indexKey: end.indexKey },
    );
    if (code === 1) return { kind: "moved", status: (other as RowStatus | undefined) ?? end.to };
    if (code === 0) return { kind: "past", status };
    if (code === 2) return { kind: "mismatch", status, heldId: other || undefined };
    if (code === 3) return { kind: "not-yet", status };
    return { kind: "gone" };
  }

  private async runTransition(
    campaign: string,
    number: number,
    from: readonly (RowStatus | "*")[],
    to: RowStatus,
    patch: OrderPatch,
    options: { follow?: FollowChange; word?: KeyWord; orderId?: string; indexKey?: string },
  ): Promise<[number, string, string?]> {
    const { follow } = options;
    const now = new Date().toISOString();
    const full = encodeOrderFields({ ...patch, updated_at: now } as Partial<LedgerOrder>);
    const args = [String(number), from.join(","), to, JSON.stringify(full), now];
    if (follow === "unfollow") args.push("unfollow", "0", followMember(campaign, number), "");
    else if (follow === "pending") args.push("pending", "0", "", campaign);
    else if (follow) args.push("follow", String(follow.at), followMember(campaign, number), "");
    else args.push("", "0", "", "");
    args.push(options.word ?? "", options.orderId ?? "");
    const k = this.keys(campaign);
    const keys = [
      ...this.scriptKeys(campaign),
      this.followKey(),
      k.meta,
      k.window,
      k.pending,
      this.runningKey(),
    ];
    if (options.indexKey) keys.push(options.indexKey);
    return (await this.script("giftjobsLedgerTransition", keys, args)) as [number, string, string?];
  }

  /** The sorted set of async orders whose status is still to be read, scored by when. */
  followKey(): string {
    return redisKey(this.prefix, "follow");
  }

  /** Follows an order from `at` unless it is followed already (the safety net of a re-run job). */
  async follow(campaign: string, number: number, at: number): Promise<void> {
    await this.redis.zadd(this.followKey(), "NX", at, followMember(campaign, number));
  }

  async unfollow(campaign: string, number: number): Promise<void> {
    await this.redis.zrem(this.followKey(), followMember(campaign, number));
  }

  /** How many orders are followed. */
  async followedCount(): Promise<number> {
    return this.redis.zcard(this.followKey());
  }

  /** How many followed orders were due for a poll before `before` and are not taken yet. */
  async followedDueCount(before: number): Promise<number> {
    return this.redis.zcount(this.followKey(), "-inf", `(${before}`);
  }

  /**
   * Takes up to `max` followed orders due by `now`, leased for `leaseMs` (they fall due again
   * if the taker dies), with their ledger records.
   */
  async claimFollowed(now: number, max: number, leaseMs: number): Promise<FollowedOrder[]> {
    const members = (await this.script(
      "giftjobsLedgerClaimFollowed",
      [this.followKey()],
      [String(now), String(max), String(now + leaseMs)],
    )) as string[];
    if (members.length === 0) return [];
    const entries = members.map((member) => {
      const space = member.indexOf(" ");
      return { campaign: member.slice(0, space), number: Number(member.slice(space + 1)) };
    });
    // One read per campaign taken from (usually one in all).
    const byCampaign = new Map<string, number[]>();
    for (const e of entries) {
      const numbers = byCampaign.get(e.campaign);
      if (numbers) numbers.push(e.number);
      else byCampaign.set(e.campaign, [e.number]);
    }
    const records = new Map<string, LedgerOrder | undefined>();
    await Promise.all(
      [...byCampaign].map(async ([campaign, numbers]) => {
        const orders = await this.getOrders(campaign, numbers);
        for (const [i, n] of numbers.entries()) records.set(followMember(campaign, n), orders[i]);
      }),
    );
    return entries.map((e) => ({ ...e, order: records.get(followMember(e.campaign, e.number)) }));
  }

  /**
   * Moves `identities` of order `from.number` to a new order of generation `generation`
   * (queued) under `key`, numbered next. The rows left behind take `restStatus` and
   * `restPatch`. Only from `from` statuses, and, when the order carries the mark of an unclear
   * attempt, only with a `word` (see KeyWord): otherwise `why` is "unclear". Returns the new
   * order's number when done.
   */
  async rekey(
    campaign: string,
    args: {
      number: number;
      key: string;
      identities: string[];
      generation: number;
      from: readonly RowStatus[];
      restStatus?: RowStatus;
      restPatch?: OrderPatch;
      word?: KeyWord;
    },
  ): Promise<
    { done: true; number: number } | { done: false; why: "not-allowed" | "unknown" | "unclear" }
  > {
    const k = this.keys(campaign);
    const [code, value] = (await this.script(
      "giftjobsLedgerRekey",
      [
        k.orders,
        k.rows,
        k.counts,
        k.window,
        k.pending,
        k.meta,
        this.runningKey(),
        this.cancelledKey(),
      ],
      [
        String(args.number),
        args.key,
        JSON.stringify(args.identities),
        String(args.generation),
        args.restStatus ?? "failed_final",
        JSON.stringify(
          encodeOrderFields({
            ...args.restPatch,
            updated_at: new Date().toISOString(),
          } as Partial<LedgerOrder>),
        ),
        args.from.join(","),
        campaign,
        args.word ?? "",
      ],
    )) as [number, number | string];
    if (code === 1) return { done: true, number: Number(value) };
    if (code === -2) return { done: false, why: "unclear" };
    return { done: false, why: code === 0 ? "not-allowed" : "unknown" };
  }

  /** Takes a failed_final row out so its changed content can be recorded again. */
  async releaseRow(
    campaign: string,
    identity: string,
  ): Promise<{ released: true; generation: number } | { released: false; status: string }> {
    const [code, value] = (await this.script(
      "giftjobsLedgerReleaseRow",
      this.scriptKeys(campaign),
      [identity],
    )) as [number, string];
    if (code === 1) return { released: true, generation: Number(value) };
    return { released: false, status: value };
  }

  async counts(campaign: string): Promise<CampaignCounts> {
    return countsOf(await this.redis.hgetall(this.keys(campaign).counts));
  }

  /** Every order of the campaign with its number, in pages (HSCAN: no whole-campaign load). */
  async *orders(campaign: string): AsyncGenerator<[number, LedgerOrder]> {
    for await (const [n, text] of this.scanHash(this.keys(campaign).orders))
      yield [Number(n), decodeOrder(text)];
  }

  async *rows(campaign: string): AsyncGenerator<[string, LedgerRow]> {
    for await (const [identity, text] of this.scanHash(this.keys(campaign).rows))
      yield [identity, decodeRow(text)];
  }

  private async *scanHash(key: string): AsyncGenerator<[string, string]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, "COUNT", 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) yield [flat[i] as string, flat[i + 1] as string];
    } while (cursor !== "0");
  }
}
