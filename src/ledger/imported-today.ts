import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";
import { replyWord } from "../redis/replies.js";
import { runScript } from "../redis/scripts.js";

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
   * step whatever runs beside it, and returns the total with them. Negative `units` give back;
   * a total back at nothing is removed, so an import that recorded nothing leaves no key.
   */
  async add(day: string, who: string, currency: string, units: bigint): Promise<bigint> {
    const args = { field: `${currency} ${who}`, units: units.toString(), seconds: KEPT_SECONDS };
    const reply = await runScript(this.redis, SCRIPT, [this.key(day)], [JSON.stringify(args)]);
    if (replyWord(reply, SCRIPT) !== "counted") throw new Error(`${SCRIPT} answered ${reply}`);
    return BigInt((reply as [string, number])[1]);
  }

  /** What `who` imported in `currency` on `day`, minor units. */
  async read(day: string, who: string, currency: string): Promise<bigint> {
    return BigInt((await this.redis.hget(this.key(day), `${currency} ${who}`)) ?? "0");
  }

  private key(day: string): string {
    return redisKey(this.prefix, "imported-today", day);
  }
}

const SCRIPT = "giftjobsLedgerCountImported";

/** Two days: the day's imports, and the next day's in the furthest time zone. */
const KEPT_SECONDS = 2 * 24 * 3600;
