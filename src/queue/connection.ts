import { type Command, Redis, type RedisOptions } from "ioredis";

/**
 * A connection that sends the commands issued during one turn of the event loop in one write:
 * the socket is corked at the first command and uncorked by setImmediate. A worker issues
 * ledger and BullMQ commands from the callbacks of many HTTP responses that land in the same
 * turn; a write per command is a system call per command, which on a small VM costs more than
 * Redis takes to run the command. Commands, replies and their order are unchanged; a command
 * waits at most until the end of the turn.
 */
export class CoalescingRedis extends Redis {
  private corked = false;

  override sendCommand(command: Command, stream?: Parameters<Redis["sendCommand"]>[1]): unknown {
    const socket = this.stream;
    if (!this.corked && this.status === "ready" && socket) {
      this.corked = true;
      socket.cork();
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    return super.sendCommand(command, stream);
  }
}

/**
 * Opens an ioredis connection for BullMQ and the ledger. `maxRetriesPerRequest: null` is what
 * BullMQ workers require (blocking commands must not give up); other clients get a bounded
 * retry so that a dead Redis is reported instead of hanging. `coalesceWrites` gives a
 * CoalescingRedis, for connections with many commands in flight.
 */
export function connectRedis(
  url: string,
  options: { forWorker?: boolean; lazy?: boolean; coalesceWrites?: boolean } = {},
): Redis {
  const base = {
    maxRetriesPerRequest: options.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: options.lazy ?? false,
    // Never log the URL: it may carry a password.
    connectionName: "giftjobs",
  } satisfies RedisOptions;
  return options.coalesceWrites ? new CoalescingRedis(url, base) : new Redis(url, base);
}

/** Resolves when Redis answers PING, or rejects with one clear line. */
export async function assertRedisAnswers(
  redis: Redis,
  url: string,
  timeoutMs = 3000,
): Promise<void> {
  const safeUrl = url.replace(/\/\/[^@/]*@/, "//***@");
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new Error(
      `Redis does not answer at ${safeUrl} (GIFTJOBS_REDIS_URL): ${(error as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}
