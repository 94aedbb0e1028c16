import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { ServiceContact, WorkerBeat, WorkerBeats } from "../campaigns/worker-beats.js";

export interface HeartbeatOptions {
  beats: WorkerBeats;
  queues: string[];
  /** How often the beat is written. @defaultValue 10000 */
  everyMs?: number;
  /** How long a beat keeps the worker alive (a killed one: gone after this). @defaultValue 30000 */
  ttlMs?: number;
  /** The service as the order worker sees it, written with each beat. */
  service?: () => ServiceContact | undefined;
  /** A beat that failed (Redis away: the next one is tried anyway). */
  onError: (error: unknown) => void;
}

/**
 * Says every `everyMs` that this worker process is alive (WorkerBeats), so that `orders status`,
 * `orders list`, the dashboard and the metrics can tell a running campaign that no worker serves
 * (docs/architecture/operators.md, "Stalled campaigns"). One MULTI per beat; the next beat is
 * timed from the end of the last, so a Redis away holds one beat, never a pile of them.
 */
export class Heartbeat {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: HeartbeatOptions) {}

  /** Writes the first beat, then one every `everyMs`. */
  async start(): Promise<void> {
    await this.beat();
    this.next();
  }

  /** Stops beating and removes the beat: from now on this worker is not alive. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beating;
    await this.options.beats.remove(this.id);
  }

  private next(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = undefined;
        this.next();
      });
    }, this.options.everyMs ?? 10_000);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const service = this.options.service?.();
    const beat: WorkerBeat = {
      id: this.id,
      hostname: hostname(),
      pid: process.pid,
      queues: this.options.queues,
      started_at: this.startedAt,
      beat_at: new Date().toISOString(),
      ...(service ? { service } : {}),
    };
    try {
      await this.options.beats.beat(beat, this.options.ttlMs ?? 30_000);
    } catch (error) {
      this.options.onError(error);
    }
  }
}
