import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";

/**
 * What each person imported on each day, per currency, across campaigns (docs/architecture/
 * audit.md, "Four eyes"): the four-eyes threshold holds a campaign whose own price passes it, and
 * also one that takes its importer's day past it, so a big campaign split into small ones is held
 * all the same. One hash per day, field `CUR name-key`, minor units; the day's hash expires two
 * days after its last import, so a name is kept no longer than the rule needs it.
 */
export class ImportedToday {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * Adds `units` to what `who` (a name key: actorKey) imported in `currency` on `day`, in one
   * step whatever runs beside it, and returns the total with them. Negative `units` give back.
   */
  async add(day: string, who: string, currency: string, units: bigint): Promise<bigint> {
    const key = this.key(day);
    const answer = await this.redis
      .multi()
      .hincrby(key, `${currency} ${who}`, units.toString())
      .expire(key, KEPT_SECONDS)
      .exec();
    const [error, total] = answer?.[0] ?? [new Error("the transaction was discarded"), 0];
    if (error) throw error;
    return BigInt(total as number | string);
  }

  /** What `who` imported in `currency` on `day`, minor units. */
  async read(day: string, who: string, currency: string): Promise<bigint> {
    return BigInt((await this.redis.hget(this.key(day), `${currency} ${who}`)) ?? "0");
  }

  private key(day: string): string {
    return redisKey(this.prefix, "imported-today", day);
  }
}

/** Two days: the day's imports, and the next day's in the furthest time zone. */
const KEPT_SECONDS = 2 * 24 * 3600;
