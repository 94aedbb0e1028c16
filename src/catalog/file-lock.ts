import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isProcessAlive } from "../catalog/process-alive.js";
import { RunError } from "../errors/run-error.js";

/** What a lock file says of its holder. */
interface Holder {
  pid: number;
  host: string;
}

/** A holder on another host cannot be asked: its lock is debris after this long. */
const STALE_MS = 60_000;
/** An append holds the lock for milliseconds, a prune for seconds; this long is someone stuck. */
const GIVE_UP_MS = 30_000;
const POLL_MS = 15;
/** A lease (LockLease) is given back when no work has come for this long. */
const LEASE_IDLE_MS = 100;
/** A lease held this long is given back for a waiter's turn. */
const LEASE_HOLD_MS = 2000;

/**
 * Runs `fn` while holding the lock file `path` (created with O_EXCL, removed after), for work of
 * milliseconds to seconds: two processes appending to one audit file never interleave or fork
 * its chain (docs/architecture/audit.md, "Where it is kept"), and a prune of the paid memory never
 * replaces a file an import is appending to (docs/architecture/repeats.md). A lock left by a
 * process gone from this host, or older than a minute, is taken over. `what` names the lock in
 * the error of a lock held too long: "the audit trail's lock".
 */
export async function withFileLock<T>(
  path: string,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  const release = await takeFileLock(path, what);
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** Takes the lock file `path` as withFileLock does; returns what releases it. */
async function takeFileLock(path: string, what: string): Promise<() => Promise<void>> {
  const me: Holder = { pid: process.pid, host: hostname() };
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      await writeFile(path, JSON.stringify(me), { flag: "wx", mode: 0o600 });
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const stale = await staleText(path);
    // Read again just before it goes: another waiter may have taken it over meanwhile.
    if (stale !== undefined && (await readText(path)) === stale) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new RunError(
        `${what} ${path} has been held for ${GIVE_UP_MS / 1000} s; if no giftjobs command is running, remove it`,
      );
    await sleep(POLL_MS);
  }
}

/**
 * A lock file held across a run of short pieces of work that come one after another (an
 * import's appends to the paid memory, a batch every few milliseconds), taken once rather than
 * once a piece: each take and release is a file made and removed, and the steps of a batch wait
 * on each other. Given back once no piece has come for LEASE_IDLE_MS, and after LEASE_HOLD_MS
 * held, when it is not taken again for two polls: a waiter (a prune) gets it within about
 * LEASE_HOLD_MS, as it would between two pieces.
 */
export class LockLease {
  private release: (() => Promise<void>) | undefined;
  private takenAt = 0;
  /** When it was last given back for a waiter's turn (after LEASE_HOLD_MS). */
  private yieldedAt = 0;
  private idle: NodeJS.Timeout | undefined;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly what: string,
    /** Runs each time the lock is taken, before the piece of work (a check of what it guards). */
    private readonly onTaken: () => Promise<void>,
  ) {}

  /** Runs `fn` holding the lock: one piece at a time, in the order asked. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.turn.then(async () => {
      clearTimeout(this.idle);
      if (this.release && Date.now() - this.takenAt >= LEASE_HOLD_MS) await this.giveBack(true);
      if (!this.release) await this.take();
      try {
        return await fn();
      } finally {
        // A failed release here leaves the lock file to the next take's check of its holder.
        this.idle = setTimeout(() => void this.close().catch(() => {}), LEASE_IDLE_MS);
        this.idle.unref();
      }
    });
    this.turn = result.catch(() => {});
    return result;
  }

  /** Gives the lock back, once the piece in progress is done. */
  close(): Promise<void> {
    const closed = this.turn.then(() => {
      clearTimeout(this.idle);
      return this.giveBack(false);
    });
    this.turn = closed.catch(() => {});
    return closed;
  }

  private async take(): Promise<void> {
    const wait = this.yieldedAt + 2 * POLL_MS - Date.now();
    if (wait > 0) await sleep(wait);
    // Its folder made when new (a campaign's first batch), as the locked work would make it.
    await mkdir(dirname(this.path), { recursive: true });
    this.release = await takeFileLock(this.path, this.what);
    this.takenAt = Date.now();
    try {
      await this.onTaken();
    } catch (error) {
      await this.giveBack(false);
      throw error;
    }
  }

  private async giveBack(yielding: boolean): Promise<void> {
    const release = this.release;
    if (!release) return;
    this.release = undefined;
    if (yielding) this.yieldedAt = Date.now();
    await release();
  }
}

/** The lock file's text when its holder is gone, else undefined. */
async function staleText(path: string): Promise<string | undefined> {
  const text = await readText(path);
  if (text === undefined) return undefined;
  let holder: Holder | undefined;
  try {
    holder = JSON.parse(text) as Holder;
  } catch {
    holder = undefined;
  }
  if (holder && holder.host === hostname() && Number.isSafeInteger(holder.pid))
    return isProcessAlive(holder.pid) ? undefined : text;
  try {
    return Date.now() - (await stat(path)).mtimeMs > STALE_MS ? text : undefined;
  } catch {
    // Gone meanwhile: the next try takes it.
    return undefined;
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}
