import type { Redis } from "ioredis";
import type { ExecutionMode, OrderRequest } from "../api/order-request.js";
import { unusualCurrencyDecimals } from "../money.js";
import { redisKey } from "../queue/names.js";
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
} from "./ledger-scripts.js";
import { ROW_STATUSES, type RowStatus } from "./row-status.js";

/** What the ledger keeps of a row: enough for the report, never the API key. */
export interface LedgerRow {
  line: number;
  /** Current order key (changes only with the generation). */
  key: string;
  generation: number;
  payload_hash: string;
  email: string;
  product_code: string;
  face_value: string;
  currency: string;
  reference?: string;
}

/** What the ledger keeps of an order; its status is the status of all its rows. */
export interface LedgerOrder {
  identities: string[];
  generation: number;
  status: RowStatus | "superseded";
  /** Execution mode the order was imported with; kept by later generations. */
  mode?: ExecutionMode;
  order_id?: string;
  /** Item id per row identity, in the order's item order. */
  item_ids?: Record<string, string>;
  payout_status?: string;
  /** Redemption links; only kept with --store-payout-urls. */
  payout_urls?: Record<string, string>;
  error_type?: string | null;
  error_message?: string | null;
  attempts?: number;
  /** Status checks of an async order so far (drives the delay between them). */
  polls?: number;
  updated_at?: string;
  replaces?: string;
  superseded_by?: string;
  /** Payment currency, and the price in its minor units (a string: exact), for the spend. */
  currency?: string;
  price?: string;
  /** Face value in minor units (a string). */
  face?: string;
  /** The service answered with an order made before this campaign was imported. */
  replayed?: boolean;
}

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
   * `spent:CUR`: price of completed orders; `planned_rows:CUR`, `planned_face:CUR`,
   * `planned_price:CUR`: what was recorded; `budget:CUR`: the most the planned price may reach
   * (RECORD refuses more; START pauses the campaign when it is over). Money in minor units, as
   * strings.
   */
  [money: `${"spent" | "planned_rows" | "planned_face" | "planned_price" | "budget"}:${string}`]:
    | string
    | undefined;
}

export type CampaignCounts = Record<RowStatus, number> & { total: number; replayed: number };

type TransitionResult =
  | { moved: true; previous: string }
  | { moved: false; current: string | null };

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
 * counts hashes as stored, and how many rows, orders and request bodies it holds.
 */
export interface CampaignShape {
  meta: Record<string, string>;
  counts: Record<string, string>;
  rows: number;
  orders: number;
  requests: number;
}

/** What a transition does to the order's entry in the follow set (see OrderFollower). */
export type FollowChange = { at: number } | "unfollow" | "pending";

/** A followed order taken by a follower: where it is, and the ledger's record of it. */
export interface FollowedOrder {
  campaign: string;
  key: string;
  order: LedgerOrder | undefined;
}

/**
 * What starting an attempt found: paused (`budget` when this start paused it: its currency's
 * planned price is over the budget), started (with the order and its body), or past it.
 */
export type StartResult =
  | { kind: "paused"; reason: string; budget?: true }
  | {
      kind: "started";
      order: LedgerOrder;
      request: OrderRequest | undefined;
      /** When the campaign was first imported (ISO), to tell a replayed order. */
      campaignCreatedAt: string | undefined;
    }
  | { kind: "past"; status: string | null };

/** The counts hash as numbers (absent fields are 0). */
export function countsOf(raw: Record<string, string>): CampaignCounts {
  const counts = {
    total: Number(raw.total ?? 0),
    replayed: Number(raw.replayed ?? 0),
  } as CampaignCounts;
  for (const status of ROW_STATUSES) counts[status] = Number(raw[status] ?? 0);
  return counts;
}

/** A follow-set member: campaign names and order keys hold no space. */
function followMember(campaign: string, key: string): string {
  return `${campaign} ${key}`;
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
      requests: `${base}:requests`,
      /** Order keys recorded queued and not yet handed to BullMQ, in sending order. */
      pending: `${base}:pending`,
      /** Order keys handed to BullMQ whose job is not over: at most the dispatch window. */
      window: `${base}:window`,
    };
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
      [state, from.join(","), new Date().toISOString(), campaign, ...Object.entries(fields).flat()],
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
   * Hands order keys of running campaigns to the dispatcher: the campaigns with work share
   * `budget` jobs in BullMQ, an equal window each of at least `least` (see DISPATCH). Returns
   * the keys now handed out, in the order their jobs are to be added.
   */
  async dispatch(budget: number, least = 4): Promise<{ campaign: string; key: string }[]> {
    const flat = (await this.script(
      "giftjobsLedgerDispatch",
      [this.runningKey()],
      [`${redisKey(this.prefix, "campaign")}:`, String(budget), String(least)],
    )) as string[];
    const out: { campaign: string; key: string }[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ campaign: flat[i]!, key: flat[i + 1]! });
    return out;
  }

  /** Keys in the campaign's dispatch window (handed to BullMQ, job not over). */
  async windowKeys(campaign: string): Promise<string[]> {
    return this.redis.smembers(this.keys(campaign).window);
  }

  /** Takes a key out of the window when its order is past queued/in_flight (a lost job). */
  async leaveWindow(campaign: string, key: string): Promise<void> {
    await this.redis.srem(this.keys(campaign).window, key);
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
    // One transaction: the five answers describe one moment.
    const replies = await this.redis
      .multi()
      .hgetall(k.meta)
      .hgetall(k.counts)
      .hlen(k.rows)
      .hlen(k.orders)
      .hlen(k.requests)
      .exec();
    const values = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [meta, counts, rows, orders, requests] = values as [
      Record<string, string>,
      Record<string, string>,
      number,
      number,
      number,
    ];
    return { meta, counts, rows, orders, requests };
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
      [k.meta, k.counts, k.rows, k.orders, k.requests, k.pending, k.window, this.runningKey()],
      [
        JSON.stringify(expected.meta),
        JSON.stringify(expected.counts),
        String(expected.rows),
        String(expected.orders),
        String(expected.requests),
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
          [k.meta, k.rows, k.orders, k.requests, k.pending, k.window],
          [],
        ),
      ) === 1
    );
  }

  /**
   * Writes back rows, orders and request bodies read from an archive (JSON as stored). Only
   * for a campaign being restored: its tombstone keeps it archived until finishRestore.
   */
  async restoreEntries(
    campaign: string,
    entries: { rows: [string, string][]; orders: [string, string][]; requests: [string, string][] },
  ): Promise<void> {
    const k = this.keys(campaign);
    const tx = this.redis.multi();
    if (entries.rows.length) tx.hset(k.rows, Object.fromEntries(entries.rows));
    if (entries.orders.length) tx.hset(k.orders, Object.fromEntries(entries.orders));
    if (entries.requests.length) tx.hset(k.requests, Object.fromEntries(entries.requests));
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
    written: { rows: number; orders: number; requests: number },
  ): Promise<{ restored: true; state: StoredState } | { restored: false; why: string }> {
    const k = this.keys(campaign);
    const [code, value] = (await this.script(
      "giftjobsLedgerFinishRestore",
      [k.meta, k.counts, this.runningKey(), k.rows, k.orders, k.requests],
      [
        archivedAt,
        campaign,
        JSON.stringify(meta),
        JSON.stringify(counts),
        String(written.rows),
        String(written.orders),
        String(written.requests),
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

  /** Orders waiting to be dispatched. */
  async pendingCount(campaign: string): Promise<number> {
    return this.redis.llen(this.keys(campaign).pending);
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
          [k.orders, k.rows, k.counts, k.pending, k.window, k.meta],
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
    return raw.map((r) => (r ? (JSON.parse(r) as LedgerRow) : undefined));
  }

  async getOrder(campaign: string, key: string): Promise<LedgerOrder | undefined> {
    const raw = await this.redis.hget(this.keys(campaign).orders, key);
    return raw ? (JSON.parse(raw) as LedgerOrder) : undefined;
  }

  async getOrders(campaign: string, keys: string[]): Promise<(LedgerOrder | undefined)[]> {
    if (keys.length === 0) return [];
    const raw = await this.redis.hmget(this.keys(campaign).orders, ...keys);
    return raw.map((r) => (r ? (JSON.parse(r) as LedgerOrder) : undefined));
  }

  /**
   * Records new rows and orders (queued) with each order's request body; what is already there
   * is left alone. Returns rows added. Throws, having written nothing, a BudgetExceededError
   * when the new orders would take a currency's planned price over the campaign's budget, a
   * CampaignClosedError when the campaign is cancelled or archived.
   */
  async record(
    campaign: string,
    rows: [identity: string, row: LedgerRow][],
    orders: [key: string, order: LedgerOrder, request: OrderRequest][],
  ): Promise<number> {
    const args = [
      JSON.stringify(rows.map(([id, row]) => [id, JSON.stringify(row)])),
      JSON.stringify(
        orders.map(([key, order, request]) => [
          key,
          JSON.stringify(order),
          JSON.stringify(request),
        ]),
      ),
    ];
    const keys = this.keys(campaign);
    const answer = await this.script(
      "giftjobsLedgerRecord",
      [...this.scriptKeys(campaign), keys.requests, keys.pending, keys.meta],
      args,
    );
    if (!Array.isArray(answer)) return Number(answer);
    const [code, ...rest] = answer as [number, ...string[]];
    if (code === -1) throw new CampaignClosedError(campaign, rest[0] as StoredState);
    const [currency, planned, batch, budget] = rest as [string, string, string, string];
    throw new BudgetExceededError(currency, BigInt(planned), BigInt(batch), BigInt(budget));
  }

  /**
   * Starts an attempt in one round trip: unless the campaign is held, paused, cancelled or over
   * its budget in the order's currency (see START), moves the order to in_flight (from queued or in_flight) and returns it with
   * its request body.
   */
  async start(campaign: string, key: string, patch: Partial<LedgerOrder>): Promise<StartResult> {
    const k = this.keys(campaign);
    const now = new Date().toISOString();
    const [code, a, b, c] = (await this.script(
      "giftjobsLedgerStart",
      [k.orders, k.rows, k.counts, k.meta, k.requests, k.window, k.pending],
      [key, JSON.stringify({ ...patch, updated_at: now }), now, DECIMALS],
    )) as [number, string, string?, string?];
    if (code === 2) return { kind: "paused", reason: a };
    if (code === 3) return { kind: "paused", reason: a, budget: true };
    if (code === 1) {
      return {
        kind: "started",
        order: JSON.parse(a) as LedgerOrder,
        request: b ? (JSON.parse(b) as OrderRequest) : undefined,
        campaignCreatedAt: c || undefined,
      };
    }
    return { kind: "past", status: code === -1 ? null : a };
  }

  /** The request body recorded for an order key. */
  async getRequest(campaign: string, key: string): Promise<OrderRequest | undefined> {
    const raw = await this.redis.hget(this.keys(campaign).requests, key);
    return raw ? (JSON.parse(raw) as OrderRequest) : undefined;
  }

  /** Records the body of an order made by the ledger itself (next generation). */
  async saveRequest(campaign: string, key: string, request: OrderRequest): Promise<void> {
    await this.redis.hsetnx(this.keys(campaign).requests, key, JSON.stringify(request));
  }

  /**
   * Moves an order and its rows to `to` when its status is one of `from` ("*" for any), and
   * with `follow` changes its entry in the follow set in the same step.
   */
  async transition(
    campaign: string,
    key: string,
    from: readonly (RowStatus | "*")[],
    to: RowStatus,
    patch: Partial<LedgerOrder> = {},
    follow?: FollowChange,
  ): Promise<TransitionResult> {
    const now = new Date().toISOString();
    const full = { ...patch, updated_at: now };
    const args = [key, from.join(","), to, JSON.stringify(full), now];
    if (follow === "unfollow") args.push("unfollow", "0", followMember(campaign, key));
    else if (follow === "pending") args.push("pending", "0", "");
    else if (follow) args.push("follow", String(follow.at), followMember(campaign, key));
    const k = this.keys(campaign);
    const [code, status] = (await this.script(
      "giftjobsLedgerTransition",
      [...this.scriptKeys(campaign), this.followKey(), k.meta, k.window, k.pending],
      args,
    )) as [number, string];
    if (code === 1) return { moved: true, previous: status };
    return { moved: false, current: code === -1 ? null : status };
  }

  /** The sorted set of async orders whose status is still to be read, scored by when. */
  followKey(): string {
    return redisKey(this.prefix, "follow");
  }

  /** Follows an order from `at` unless it is followed already (the safety net of a re-run job). */
  async follow(campaign: string, key: string, at: number): Promise<void> {
    await this.redis.zadd(this.followKey(), "NX", at, followMember(campaign, key));
  }

  async unfollow(campaign: string, key: string): Promise<void> {
    await this.redis.zrem(this.followKey(), followMember(campaign, key));
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
      return { campaign: member.slice(0, space), key: member.slice(space + 1) };
    });
    // One read per campaign taken from (usually one in all).
    const byCampaign = new Map<string, string[]>();
    for (const e of entries) {
      const keys = byCampaign.get(e.campaign);
      if (keys) keys.push(e.key);
      else byCampaign.set(e.campaign, [e.key]);
    }
    const records = new Map<string, LedgerOrder | undefined>();
    await Promise.all(
      [...byCampaign].map(async ([campaign, keys]) => {
        const orders = await this.getOrders(campaign, keys);
        for (const [i, key] of keys.entries()) records.set(followMember(campaign, key), orders[i]);
      }),
    );
    return entries.map((e) => ({ ...e, order: records.get(followMember(e.campaign, e.key)) }));
  }

  /**
   * Moves `identities` of order `oldKey` to a new order `newKey` of generation `generation`
   * (queued). The rows left behind take `restStatus` and `restPatch`. Only from `from` statuses.
   */
  async rekey(
    campaign: string,
    args: {
      oldKey: string;
      newKey: string;
      identities: string[];
      generation: number;
      from: readonly RowStatus[];
      restStatus?: RowStatus;
      restPatch?: Partial<LedgerOrder>;
    },
  ): Promise<"done" | "not-allowed" | "unknown" | "already"> {
    const code = Number(
      await this.script("giftjobsLedgerRekey", this.rekeyKeys(campaign), [
        args.oldKey,
        args.newKey,
        JSON.stringify(args.identities),
        String(args.generation),
        args.restStatus ?? "failed_final",
        JSON.stringify({ ...args.restPatch, updated_at: new Date().toISOString() }),
        args.from.join(","),
      ]),
    );
    return code === 1 ? "done" : code === 0 ? "not-allowed" : code === 2 ? "already" : "unknown";
  }

  private rekeyKeys(campaign: string): string[] {
    const k = this.keys(campaign);
    return [...this.scriptKeys(campaign), k.window, k.pending, k.meta];
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

  /** Request bodies of these order keys, in the same order (undefined where none). */
  async getRequests(campaign: string, keys: string[]): Promise<(OrderRequest | undefined)[]> {
    if (keys.length === 0) return [];
    const raw = await this.redis.hmget(this.keys(campaign).requests, ...keys);
    return raw.map((r) => (r ? (JSON.parse(r) as OrderRequest) : undefined));
  }

  /** Every order of the campaign, in pages (HSCAN: no whole-campaign load in one reply). */
  async *orders(campaign: string): AsyncGenerator<[string, LedgerOrder]> {
    yield* this.scanHash<LedgerOrder>(this.keys(campaign).orders);
  }

  async *rows(campaign: string): AsyncGenerator<[string, LedgerRow]> {
    yield* this.scanHash<LedgerRow>(this.keys(campaign).rows);
  }

  private async *scanHash<T>(key: string): AsyncGenerator<[string, T]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, "COUNT", 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2)
        yield [flat[i] as string, JSON.parse(flat[i + 1] as string) as T];
    } while (cursor !== "0");
  }
}
