import type { Redis } from "ioredis";
import { ProductOverrides } from "../catalog/product-overrides.js";
import { redisKey } from "../redis/redis-key.js";
import { DailySpend } from "./daily-limit.js";
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

/** A follow-set member: campaign names hold no space. */
export function followMember(campaign: string, number: number | "*"): string {
  return `${campaign} ${number}`;
}

/**
 * The ground of the Ledger: its connection and key prefix, the names of its Redis keys, and
 * its Lua scripts, defined on the connection and run through `script`.
 */
export class LedgerBase {
  constructor(
    protected readonly redis: Redis,
    protected readonly prefix: string,
  ) {
    // Defined once per connection: ioredis then sends EVALSHA, not the script text each call.
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
  }

  protected script(name: keyof typeof SCRIPTS, keys: string[], args: string[]): Promise<unknown> {
    const command = (
      this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>
    )[name]!;
    return command.call(this.redis, keys.length, ...keys, ...args);
  }

  /**
   * The product states the service pushed (`product.update`), kept under this prefix on this
   * connection (src/catalog/product-overrides.ts): an import lays them over its catalog index.
   */
  productOverrides(): ProductOverrides {
    return new ProductOverrides(this.redis, this.prefix);
  }

  /** The day's spend per currency and the daily limit's pause (src/ledger/daily-limit.ts). */
  dailySpend(): DailySpend {
    return new DailySpend(this.redis, this.prefix, (c) => this.keys(c), this.runningKey());
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
      /** Rows ended per minute, for the dashboard's chart (includes/minutes.lua). */
      minutes: `${base}:minutes`,
    };
  }

  /**
   * Orders that reached an end and are not yet counted by a metrics endpoint, a hash by end
   * (completed, failed_final, failed_uncertain, cancelled): every script that moves an order to
   * an end adds to it, whichever process runs it (see claimEndedOrders).
   */
  endedKey(): string {
    return redisKey(this.prefix, "orders-ended");
  }

  /** The counter of cancelled orders of giftjobs before endedKey: still claimed, never written. */
  legacyCancelledKey(): string {
    return redisKey(this.prefix, "orders-cancelled");
  }

  /** Campaigns whose state is running: the dispatcher's list. */
  runningKey(): string {
    return redisKey(this.prefix, "running");
  }

  /** The sorted set of async orders whose status is still to be read, scored by when. */
  followKey(): string {
    return redisKey(this.prefix, "follow");
  }

  protected scriptKeys(campaign: string): [string, string, string] {
    const k = this.keys(campaign);
    return [k.orders, k.rows, k.counts];
  }
}
