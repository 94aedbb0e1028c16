import type { LedgerOrders } from "./orders.js";
import { followMember, type LedgerStore } from "./store.js";
import type { FollowedOrder, LedgerOrder } from "./types.js";

/**
 * The ledger's follow set: the async orders whose status is still to be read, scored by when
 * (see OrderFollower); a transition changes an order's entry in the same step.
 */
export class LedgerFollows {
  constructor(
    private readonly store: LedgerStore,
    /** Where the orders taken are read, one read per campaign. */
    private readonly orders: Pick<LedgerOrders, "getOrders">,
  ) {}

  /** The sorted set's key. */
  key(): string {
    return this.store.followKey();
  }

  /** Follows an order from `at` unless it is followed already (the safety net of a re-run job). */
  async add(campaign: string, number: number, at: number): Promise<void> {
    await this.store.redis.zadd(this.key(), "NX", at, followMember(campaign, number));
  }

  async remove(campaign: string, number: number): Promise<void> {
    await this.store.redis.zrem(this.key(), followMember(campaign, number));
  }

  /** How many orders are followed. */
  async count(): Promise<number> {
    return this.store.redis.zcard(this.key());
  }

  /** How many followed orders were due for a poll before `before` and are not taken yet. */
  async dueCount(before: number): Promise<number> {
    return this.store.redis.zcount(this.key(), "-inf", `(${before}`);
  }

  /**
   * Takes up to `max` followed orders due by `now`, leased for `leaseMs` (they fall due again
   * if the taker dies), with their ledger records.
   */
  async claim(now: number, max: number, leaseMs: number): Promise<FollowedOrder[]> {
    const members = (await this.store.run(
      "giftjobsLedgerClaimFollowed",
      [this.key()],
      [JSON.stringify({ now: String(now), max, lease_end: String(now + leaseMs) })],
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
        const orders = await this.orders.getOrders(campaign, numbers);
        for (const [i, n] of numbers.entries()) records.set(followMember(campaign, n), orders[i]);
      }),
    );
    return entries.map((e) => ({ ...e, order: records.get(followMember(e.campaign, e.number)) }));
  }

  /** Members of the follow set that belong to the campaign (none once it is done). */
  async countOf(campaign: string): Promise<number> {
    let cursor = "0";
    let found = 0;
    do {
      const [next, flat] = await this.store.redis.zscan(
        this.key(),
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
}
