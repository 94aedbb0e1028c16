import { redisKey } from "../redis/redis-key.js";
import { LedgerBase } from "./ledger-base.js";
import { ROW_STATUSES } from "./row-status.js";
import type { CampaignCounts, CampaignMeta, StoredState } from "./types.js";

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

/**
 * The Ledger's campaigns: the campaigns set, each campaign's meta (settings, budgets) and
 * state (held, running, paused, ...), kept in step with the dispatcher's running set, and its
 * counts.
 */
export class CampaignLedger extends LedgerBase {
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

  async pausedReason(campaign: string): Promise<string | null> {
    return this.redis.hget(this.keys(campaign).meta, "paused_reason");
  }

  async counts(campaign: string): Promise<CampaignCounts> {
    return countsOf(await this.redis.hgetall(this.keys(campaign).counts));
  }

  /** Bytes of Redis the campaign's keys take (MEMORY USAGE, sampled for large hashes). */
  async memoryUsage(campaign: string): Promise<number> {
    const keys = Object.values(this.keys(campaign));
    const sizes = await Promise.all(keys.map((key) => this.redis.memory("USAGE", key)));
    return sizes.reduce<number>((sum, n) => sum + Number(n ?? 0), 0);
  }
}
