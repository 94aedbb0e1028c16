import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";

/** Rows that ended in one minute (or, bucketed, per minute over several). */
export interface MinutePoint {
  /** Start of the minute (or bucket), ms since the epoch. */
  at: number;
  completed: number;
  failed: number;
}

const MINUTE_MS = 60_000;
const FIELD = /^([cf]):(\d{4}-\d\d-\d\dT\d\d:\d\d)$/;

/**
 * A campaign's rows per minute as the ledger's TRANSITION script counts them, in the hash
 * `<prefix>:campaign:<name>:minutes` (src/ledger/lua/includes/minutes.lua; docs/architecture/
 * ledger.md, "Redis keys"): `c:YYYY-MM-DDTHH:MM` rows completed, `f:...` rows failed.
 */
export class MinuteHistory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(campaign: string): string {
    return `${redisKey(this.prefix, "campaign", campaign)}:minutes`;
  }

  /** The minutes with rows, oldest first. One HGETALL: two fields a minute of work at most. */
  async read(campaign: string): Promise<MinutePoint[]> {
    return minutePoints(await this.redis.hgetall(this.key(campaign)));
  }
}

/**
 * The hash's fields as points, oldest first; fields of another form are ignored.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function minutePoints(hash: Record<string, string>): MinutePoint[] {
  const byMinute = new Map<number, MinutePoint>();
  for (const [field, value] of Object.entries(hash)) {
    const match = FIELD.exec(field);
    const n = Number.parseInt(value, 10);
    if (!match || !Number.isFinite(n)) continue;
    const at = Date.parse(`${match[2]}:00Z`);
    if (Number.isNaN(at)) continue;
    const point = byMinute.get(at) ?? { at, completed: 0, failed: 0 };
    if (match[1] === "c") point.completed += n;
    else point.failed += n;
    byMinute.set(at, point);
  }
  return [...byMinute.values()].sort((a, b) => a.at - b.at);
}

/** Points over a span cut into buckets of whole minutes, each a rate per minute. */
export interface Buckets {
  points: MinutePoint[];
  /** Minutes each bucket spans. */
  minutes: number;
}

/**
 * The minutes from the first point to `until` (a running campaign: now; else its last point),
 * quiet minutes included, in at most `max` buckets of equal whole minutes; each bucket's counts
 * are its rows per minute (its sum over its minutes), so a chart of a long campaign stays
 * `max` points whatever its length.
 */
export function bucketed(points: MinutePoint[], max: number, until?: number): Buckets {
  if (points.length === 0) return { points: [], minutes: 1 };
  const first = points[0]!.at;
  const last = Math.max(points.at(-1)!.at, floorMinute(until ?? 0));
  const span = (last - first) / MINUTE_MS + 1;
  const minutes = Math.max(1, Math.ceil(span / max));
  const count = Math.ceil(span / minutes);
  const buckets = Array.from({ length: count }, (_, i) => ({
    at: first + i * minutes * MINUTE_MS,
    completed: 0,
    failed: 0,
  }));
  for (const p of points) {
    const b = buckets[Math.floor((p.at - first) / MINUTE_MS / minutes)];
    if (!b) continue;
    b.completed += p.completed;
    b.failed += p.failed;
  }
  for (const b of buckets) {
    b.completed /= minutes;
    b.failed /= minutes;
  }
  return { points: buckets, minutes };
}

function floorMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}
