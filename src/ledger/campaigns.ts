import { replyWord } from "../redis/replies.js";
import { ROW_STATUSES } from "./row-status.js";
import type { LedgerStore } from "./store.js";
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
 * The ledger's campaigns: the campaigns set, each campaign's meta (settings, budgets) and
 * state (held, running, paused, ...), kept in step with the dispatcher's running set, and its
 * counts.
 */
export class LedgerCampaigns {
  constructor(private readonly store: LedgerStore) {}

  /** Every campaign's name, sorted. */
  async names(): Promise<string[]> {
    return (await this.store.redis.smembers(this.store.campaignsKey())).sort();
  }

  async exists(campaign: string): Promise<boolean> {
    return (await this.store.redis.sismember(this.store.campaignsKey(), campaign)) === 1;
  }

  /**
   * Registers a campaign; settings recorded by its first import are kept (the state too: a
   * later import changes it only through setState). A new campaign that is to run at once is
   * in the running set from the start.
   */
  async register(campaign: string, meta: CampaignMeta): Promise<void> {
    const k = this.store.keys(campaign);
    const tx = this.store.redis.multi().sadd(this.store.campaignsKey(), campaign);
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
    const state = await this.store.redis.hget(this.store.keys(campaign).meta, "state");
    if ((state ?? "running") === "running")
      await this.store.redis.sadd(this.store.runningKey(), campaign);
  }

  async meta(campaign: string): Promise<CampaignMeta> {
    return (await this.store.redis.hgetall(this.store.keys(campaign).meta)) as CampaignMeta;
  }

  /** Sets fields of the campaign's meta (not its state: see setState). */
  async setMeta(campaign: string, fields: Record<string, string>): Promise<void> {
    if ("state" in fields) throw new Error("the state changes through setState");
    await this.store.redis.hset(this.store.keys(campaign).meta, fields);
  }

  /** Removes fields of the campaign's meta (not its state). */
  async clearMeta(campaign: string, ...fields: string[]): Promise<void> {
    if (fields.includes("state")) throw new Error("the state changes through setState");
    await this.store.redis.hdel(this.store.keys(campaign).meta, ...fields);
  }

  /**
   * Moves the campaign to `state` if its current state is one of `from` ("*": any), setting
   * `fields` with it, and keeps the dispatcher's running set in step, in one script.
   */
  async setState({
    campaign,
    state,
    from,
    fields = {},
  }: {
    campaign: string;
    state: StoredState;
    from: readonly (StoredState | "*")[];
    fields?: Record<string, string>;
  }): Promise<{ changed: boolean; previous: StoredState }> {
    const reply = await this.store.run(
      "giftjobsLedgerSetState",
      [this.store.keys(campaign).meta, this.store.runningKey()],
      [JSON.stringify({ campaign, state, from: from.join(","), fields })],
    );
    const kind = replyWord(reply, "SET_STATE");
    return { changed: kind === "state_set", previous: (reply as [string, StoredState])[1] };
  }

  async pausedReason(campaign: string): Promise<string | null> {
    return this.store.redis.hget(this.store.keys(campaign).meta, "paused_reason");
  }

  async counts(campaign: string): Promise<CampaignCounts> {
    return countsOf(await this.store.redis.hgetall(this.store.keys(campaign).counts));
  }

  /** Bytes of Redis the campaign's keys take (MEMORY USAGE, sampled for large hashes). */
  async memoryUsage(campaign: string): Promise<number> {
    const keys = Object.values(this.store.keys(campaign));
    const sizes = await Promise.all(keys.map((key) => this.store.redis.memory("USAGE", key)));
    return sizes.reduce<number>((sum, n) => sum + Number(n ?? 0), 0);
  }
}
