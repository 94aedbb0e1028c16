import type { Job, Worker } from "bullmq";
import type { Logger } from "../log.js";
import type { RedisConnection } from "../redis/connection.js";

/** Jobs this process is running now, across its BullMQ workers. */
export class ActiveJobs {
  private running = 0;

  get count(): number {
    return this.running;
  }

  /** The processor, counted while each of its jobs runs. */
  counted<D, R>(processor: (job: Job<D, R>, token?: string) => Promise<R>) {
    return async (job: Job<D, R>, token?: string): Promise<R> => {
      this.running += 1;
      try {
        return await processor(job, token);
      } finally {
        this.running -= 1;
      }
    };
  }
}

/** How long the workers may still be closing once no job of theirs runs. */
const STUCK_CLOSE_MS = 5000;

/**
 * Closes BullMQ workers, letting their active jobs end. On a Redis Cluster whose master died,
 * BullMQ's close has been seen to wait for ever for a blocking connection it re-made meanwhile;
 * once no job runs and the close has not ended within STUCK_CLOSE_MS, the workers' own
 * connections are dropped instead (nothing is lost: no job of theirs is running).
 */
export async function closeBullWorkers(
  workers: Worker[],
  active: ActiveJobs,
  log: Logger,
): Promise<void> {
  const closing = Promise.all(workers.map((w) => w.close())).then(() => true);
  let idleSince: number | undefined;
  while (!(await Promise.race([closing, delay(250).then(() => false)]))) {
    if (active.count > 0) {
      idleSince = undefined;
      continue;
    }
    idleSince ??= Date.now();
    if (Date.now() - idleSince < STUCK_CLOSE_MS) continue;
    log.warn("the queue workers did not stop after their last job; dropping their connections");
    // Not awaited for long: a disconnect waits for an 'end' that such a connection may never send.
    await settledWithin(2000, () => Promise.all(workers.map((w) => w.disconnect())));
    return;
  }
}

/** How long the follower, tracker and queues may take to close once the workers have. */
export const STOP_MS = 10_000;

/** Runs `fn`, waiting for it at most `ms` (what it left undone goes on unawaited). */
export async function settledWithin(ms: number, fn: () => Promise<unknown>): Promise<void> {
  await Promise.race([fn().catch(() => undefined), delay(ms)]);
}

/** QUIT, or a plain disconnect when Redis does not answer it within `ms`. */
export async function quitWithin(connection: RedisConnection, ms = 2000): Promise<void> {
  const quit = connection.quit().then(
    () => true,
    () => false,
  );
  if (!(await Promise.race([quit, delay(ms).then(() => false)]))) connection.disconnect();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
