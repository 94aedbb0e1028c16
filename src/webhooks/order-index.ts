import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";

/** Where an order id's campaign order is: its follow-set member's two parts. */
export interface IndexedOrder {
  campaign: string;
  /** The order's number in its campaign. */
  number: number;
}

/** An index entry (`"<campaign> <order number>"`) read. */
export function indexEntry(member: string): IndexedOrder {
  const space = member.indexOf(" ");
  return { campaign: member.slice(0, space), number: Number(member.slice(space + 1)) };
}

/**
 * The service's order id -> the campaign order that made it (`<prefix>:order-ids`, a hash whose
 * value is the follow-set member `"<campaign> <order number>"`). A FAILED `order.completion` carries
 * only the order id, so the receiver needs this to find the ledger's order. Written when an
 * async order is accepted (with webhooks on), removed when the order ends
 * (docs/architecture/webhooks.md, "Webhooks").
 */
export class OrderIndex {
  /** The hash's key: the ledger's ending script forgets an ended order's id in it. */
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = redisKey(prefix, "order-ids");
  }

  async remember(orderId: string, campaign: string, number: number): Promise<void> {
    await this.redis.hset(this.key, orderId, `${campaign} ${number}`);
  }

  async find(orderId: string): Promise<IndexedOrder | undefined> {
    const member = await this.redis.hget(this.key, orderId);
    return member ? indexEntry(member) : undefined;
  }

  /**
   * True the first time it is asked for `messageId` (within an hour): a message about an
   * unknown order is then asked again once, not for as long as the service keeps retrying.
   */
  async firstAsk(messageId: string): Promise<boolean> {
    const key = `${this.key}:asked:${messageId}`;
    return (await this.redis.set(key, "1", "EX", 3600, "NX")) === "OK";
  }

  async size(): Promise<number> {
    return this.redis.hlen(this.key);
  }
}
