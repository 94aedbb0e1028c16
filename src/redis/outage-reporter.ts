import { writeAboveOverlay } from "../log.js";
import type { RedisConnection, RedisSettings } from "./connection.js";

/** How often a line is printed while Redis is away. */
const EVERY_MS = 5000;
/** An outage shorter than this (a reconnect) is not worth a line. */
const QUIET_MS = 1000;

/**
 * Errors that say Redis is away (refused, reset, closed, loading, failing over), not a bug;
 * REDIS_DOWN is the code of RedisDownError, the same told in plain words.
 */
const CONNECTION_TROUBLE =
  /REDIS_DOWN|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed|Stream isn't writeable|max retries per request|Socket closed|LOADING|CLUSTERDOWN|TRYAGAIN|slots cache|startup nodes|Connection lost|connection is closed|Command timed out/i;

/** True when `error` is Redis being away rather than a failure of giftjobs or of a command. */
export function isRedisAway(error: unknown): boolean {
  const e = error as { message?: unknown; code?: unknown } | undefined;
  return CONNECTION_TROUBLE.test(`${String(e?.code ?? "")} ${String(e?.message ?? error)}`);
}

/** `HOST:PORT` of Redis (or the seeds of a cluster), never with credentials. */
export function redisAddress(settings: RedisSettings): string {
  if (settings.redisClusterNodes)
    return settings.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(",");
  try {
    const url = new URL(settings.redisUrl);
    return `${url.hostname || "127.0.0.1"}:${url.port || "6379"}`;
  } catch {
    return "the configured address";
  }
}

/**
 * Says, in one line every few seconds, that Redis is away, and in one line that it is back
 * (docs/architecture/redis.md, "Redis outages"). Every connection, BullMQ worker and loop of a
 * process tells the same reporter, so an outage is a few lines, not a stack trace per retry.
 * Commands made while Redis is away wait for it (or fail and are tried again by their loop):
 * nothing is lost, which is why the line says so.
 */
export class OutageReporter {
  private downSince: number | undefined;
  private lastLine = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly watched: RedisConnection[] = [];

  constructor(
    private readonly address: string,
    // Above a progress bar when one is drawn (orders status --wait on a terminal).
    private readonly write: (line: string) => void = writeAboveOverlay,
    private readonly everyMs = EVERY_MS,
  ) {}

  /** Listens to `connection`: its errors are an outage, its `ready` the end of one. */
  watch(connection: RedisConnection): this {
    this.watched.push(connection);
    connection.on("error", (error: unknown) => this.failed(error));
    connection.on("ready", () => this.answered());
    return this;
  }

  /**
   * Tells of an error. Returns true when it is Redis being away (or comes while it is), which
   * the reporter has then accounted for: the caller says nothing and retries later.
   */
  failed(error: unknown): boolean {
    if (!isRedisAway(error) && this.downSince === undefined) return false;
    if (this.watched.length > 0 && this.watched.every((c) => c.status === "ready")) {
      // A late error of a connection that has already come back.
      return isRedisAway(error);
    }
    this.down();
    return true;
  }

  /** Redis answered (a command of a loop, a connection's `ready`). */
  answered(): void {
    if (this.downSince === undefined) return;
    const seconds = Math.round((Date.now() - this.downSince) / 1000);
    const spoke = this.lastLine >= this.downSince;
    this.downSince = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
    if (spoke) this.write(`giftjobs: Redis is back after ${seconds} s\n`);
  }

  /** Stops the timer (the process is stopping). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private down(): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.timer = setInterval(() => this.tick(), Math.min(QUIET_MS, this.everyMs));
    this.timer.unref();
  }

  private tick(): void {
    if (this.downSince === undefined) return;
    // Watched connections all back: the outage is over even if no one said so.
    if (this.watched.length > 0 && this.watched.every((c) => c.status === "ready")) {
      this.answered();
      return;
    }
    const now = Date.now();
    if (now - this.downSince < QUIET_MS || now - this.lastLine < this.everyMs) return;
    this.lastLine = now;
    const seconds = Math.round((now - this.downSince) / 1000);
    this.write(
      `giftjobs: Redis at ${this.address} is not answering (${seconds} s): waiting for it; nothing is lost\n`,
    );
  }
}
