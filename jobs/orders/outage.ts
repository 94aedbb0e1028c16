import { DelayedError, type Job, type Queue } from "bullmq";
import { ApiError } from "../../src/api/errors/index.js";
import { WORKER_DEFAULTS } from "../../src/worker-defaults.js";
import type { OrderJobData } from "./job.js";

/** What `OutageHold.admit` lets a job do. */
export type Admission = "send" | "probe" | "wait";

/**
 * How the order worker waits out a service it cannot reach (docs/architecture/sending-orders.md,
 * "Service outages"). A request that got no answer holds the whole queue (BullMQ's rate limit)
 * for a delay that grows while the service stays away: from `baseMs`, doubling, at most `maxMs`;
 * the holds of the requests in flight at once share one. While the worker's ServiceWatch says
 * the service is down, one job at a time goes out (the probe); the others are put back unsent.
 * One instance per worker process.
 */
export class OutageHold {
  private streak = 0;
  private until = 0;
  private probing = false;

  constructor(
    /** Whether the service is known down: the worker's ServiceWatch. */
    private readonly isDown: () => boolean = () => false,
    private readonly baseMs: number = WORKER_DEFAULTS.outageHoldMs,
    private readonly maxMs: number = WORKER_DEFAULTS.outageHoldMaxMs,
  ) {}

  /** Whether the service is known down now. */
  down(): boolean {
    return this.isDown();
  }

  /**
   * Before a job sends: `send` while the service is not known down; while it is, `probe` for one
   * job at a time (call `probed` when it is over) and `wait` for the others.
   */
  admit(): Admission {
    if (!this.isDown()) return "send";
    if (this.probing) return "wait";
    this.probing = true;
    return "probe";
  }

  /** The probe is over, whatever it got. */
  probed(): void {
    this.probing = false;
  }

  /** After a request with no answer: ms to hold the queue, the hold in force or the next one. */
  next(now = Date.now()): number {
    if (now < this.until) return this.until - now;
    this.streak += 1;
    const ms = Math.min(this.baseMs * 2 ** Math.min(this.streak - 1, 30), this.maxMs);
    this.until = now + ms;
    return ms;
  }

  /** For a job put back unsent: the hold in force, else the shortest (no longer next time). */
  current(now = Date.now()): number {
    return now < this.until ? this.until - now : this.baseMs;
  }

  /** The service answered: the next outage starts from the shortest hold. */
  reset(): void {
    this.streak = 0;
    this.until = 0;
  }
}

/**
 * A request that got no answer at all: not found, refused, timed out, reset (an ApiError of status
 * 0, a cancel apart), or a 5xx. The ServiceWatch counts the same ones as the service away.
 */
export function noAnswer(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  if (error.status === 0) return error.type !== "aborted";
  return error.status >= 500;
}

/**
 * Holds the queue for `waitMs` and puts the job back (with its lock token) without using one of
 * its attempts: to the delayed set, so it comes back behind the jobs that waited (each of them
 * gets its turn as the probe). Always throws; BullMQ takes the DelayedError as "moved, not failed".
 */
export async function putBack(
  held: { job: Job<OrderJobData>; token?: string },
  queue: Queue<OrderJobData>,
  waitMs: number,
): Promise<never> {
  await queue.rateLimit(waitMs);
  await held.job.moveToDelayed(Date.now() + waitMs, held.token);
  throw new DelayedError();
}
