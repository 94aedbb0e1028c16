import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";

/**
 * The service as one worker last saw it, in its beat: when a request last got an answer, the
 * last error, and since when none has (while that lasts past a few seconds). No API key.
 */
export interface ServiceContact {
  /** The service's base URL, without credentials. */
  url: string;
  last_answer_at: string | null;
  /** `type: message` of the last request that got no answer (refused, timed out, 5xx). */
  last_error: string | null;
  unreachable_since: string | null;
}

/** What a worker process says of itself every few seconds (`<prefix>:workers:<id>`). */
export interface WorkerBeat {
  id: string;
  hostname: string;
  pid: number;
  /** The queues it serves: `orders`, `catalog`. */
  queues: string[];
  started_at: string;
  /** When this beat was written (the worker's clock). */
  beat_at: string;
  /** Order workers only. */
  service?: ServiceContact;
}

/** An id left in the index this long after its last beat is dropped by the next beat. */
const FORGET_MS = 60 * 60 * 1000;

/** Beats read at most: the newest ones (a worker in a crash loop leaves one id per start). */
const MAX_READ = 100;

/**
 * Which worker processes are alive (docs/architecture/operators.md, "Stalled campaigns"). Each
 * writes its beat under `<prefix>:workers:<id>` with a TTL and scores its id by the time in the
 * sorted set `<prefix>:workers`, in one MULTI (one round trip every few seconds). A worker is
 * alive while its beat key exists: Redis expires it, so readers need neither the TTL nor a
 * clock of their own, and the sorted set lists the ids without a SCAN. Every key is under the
 * prefix (one hash-tag slot on a Redis Cluster).
 */
export class WorkerBeats {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Writes `beat`, alive for `ttlMs` unless written again. */
  async beat(beat: WorkerBeat, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.redis
      .multi()
      .set(this.beatKey(beat.id), JSON.stringify(beat), "PX", ttlMs)
      .zadd(this.indexKey(), now, beat.id)
      .zremrangebyscore(this.indexKey(), "-inf", now - FORGET_MS)
      .exec();
  }

  /** A worker that stops says so: it is no longer alive from this moment. */
  async remove(id: string): Promise<void> {
    await this.redis.multi().del(this.beatKey(id)).zrem(this.indexKey(), id).exec();
  }

  /** The beats of the workers alive now, newest first. */
  async alive(): Promise<WorkerBeat[]> {
    const ids = await this.redis.zrevrange(this.indexKey(), 0, MAX_READ - 1);
    if (ids.length === 0) return [];
    const beats = await this.redis.mget(...ids.map((id) => this.beatKey(id)));
    return beats.flatMap((beat) => (beat ? parseBeat(beat) : []));
  }

  /** How many workers serving the `orders` queue are alive: 0 means no order is sent. */
  async orderWorkers(): Promise<number> {
    return (await this.alive()).filter((beat) => beat.queues.includes("orders")).length;
  }

  private indexKey(): string {
    return redisKey(this.prefix, "workers");
  }

  private beatKey(id: string): string {
    return redisKey(this.prefix, "workers", id);
  }
}

function parseBeat(text: string): WorkerBeat[] {
  try {
    const beat = JSON.parse(text) as WorkerBeat;
    return Array.isArray(beat.queues) ? [beat] : [];
  } catch {
    return [];
  }
}
