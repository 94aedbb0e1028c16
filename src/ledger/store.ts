import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";
import { runScript, type ScriptName } from "../redis/scripts.js";

/** A follow-set member: campaign names hold no space. */
export function followMember(campaign: string, number: number | "*"): string {
  return `${campaign} ${number}`;
}

/** The Redis keys of one campaign's ledger (docs/architecture/ledger.md, "Redis keys"). */
export interface CampaignKeys {
  orders: string;
  rows: string;
  counts: string;
  meta: string;
  /** Numbers of orders recorded queued and not yet handed to BullMQ, in sending order. */
  pending: string;
  /** Numbers of orders handed to BullMQ whose job is not over: at most the dispatch window. */
  window: string;
  /** Numbers of orders whose rows have a send_at still ahead, scored by it (ms). */
  scheduled: string;
  /** Rows ended per minute, for the dashboard's chart (includes/minutes.lua). */
  minutes: string;
}

/**
 * What the parts of the ledger share: one connection, the key prefix with the names of the
 * keys under it, and `run`, which runs a Lua script (defined on the connection at its first run).
 */
export class LedgerStore {
  constructor(
    readonly redis: Redis,
    readonly prefix: string,
  ) {}

  /** Runs one of the scripts (src/redis/scripts.ts) with every key it touches in `keys`. */
  run(name: ScriptName, keys: string[], args: string[]): Promise<unknown> {
    return runScript(this.redis, name, keys, args);
  }

  keys(campaign: string): CampaignKeys {
    const base = redisKey(this.prefix, "campaign", campaign);
    return {
      orders: `${base}:orders`,
      rows: `${base}:rows`,
      counts: `${base}:counts`,
      meta: `${base}:meta`,
      pending: `${base}:pending`,
      window: `${base}:window`,
      scheduled: `${base}:scheduled`,
      minutes: `${base}:minutes`,
    };
  }

  /**
   * An import's fence for RECORD (see RecordFence in record-argument.ts): the number of its last batch
   * recorded. Not among `keys`: it lives while the import runs, and expires should it crash.
   */
  fenceKey(campaign: string, id: string): string {
    return `${redisKey(this.prefix, "campaign", campaign)}:fence:${id}`;
  }

  /** The set of every campaign's name. */
  campaignsKey(): string {
    return redisKey(this.prefix, "campaigns");
  }

  /**
   * Orders that reached an end and are not yet counted by a metrics endpoint, a hash by end
   * (completed, failed_final, failed_uncertain, cancelled): every script that moves an order to
   * an end adds to it, whichever process runs it (see LedgerOrders.claimEnded).
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
}
