import { randomUUID } from "node:crypto";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { RunError } from "../errors/run-error.js";
import { isProcessAlive } from "./process-alive.js";
import { catalogDir } from "./snapshot-layout.js";

/** What the lock file says about the sync that holds it. */
interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
  token: string;
}

export interface SyncLock {
  /** Removes the lock, if it is still this sync's. */
  release(): Promise<void>;
}

/**
 * A lock is taken over after this long whoever holds it: a sync takes minutes, and a pid can be
 * reused after a reboot. Another host's lock is only taken over then (its pid cannot be checked).
 */
const STALE_AFTER_MS = 24 * 3600_000;
/** An unreadable lock may be one being written this instant; after this long it is debris. */
const UNREADABLE_STALE_MS = 60_000;

/** The lock is held by a sync that is still running: trying again later may succeed. */
export class SyncLockHeldError extends RunError {
  override readonly name = "SyncLockHeldError";
}

function syncLockPath(dataDir: string): string {
  return join(catalogDir(dataDir), "sync.lock");
}

/**
 * Takes the catalog store's sync lock, so that two syncs (the nightly job and a manual run, say)
 * never run at once: each would diff against, and guard the shrink of, the snapshot that was
 * current when it began, and the later publish would hide the earlier one's changes from the
 * history. A lock left by a process that is gone is taken over; one that is held is a RunError
 * naming its owner.
 */
export async function acquireSyncLock(dataDir: string): Promise<SyncLock> {
  const path = syncLockPath(dataDir);
  await mkdir(catalogDir(dataDir), { recursive: true });
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    token: randomUUID(),
  };
  // Twice at most: once more after removing a stale lock.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(path, `${JSON.stringify(owner)}\n`, { flag: "wx", mode: 0o644 });
      return { release: () => releaseIfOwned(path, owner.token) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const held = await readOwner(path);
    if (held === undefined ? !(await isOldFile(path)) : !isStale(held)) {
      const who = held
        ? `pid ${held.pid} on ${held.host}, since ${held.started_at}`
        : "its lock file is being written";
      throw new SyncLockHeldError(
        `another catalog sync is running (${who}); ` +
          `the current snapshot is unchanged. If none is running, remove ${path}`,
      );
    }
    await removeIfUnchanged(path, held);
  }
  throw new RunError(`could not take the catalog sync lock ${path}; another sync took it first`);
}

/** The owner the lock file names, or undefined when it is unreadable or gone. */
async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(path, "utf8")) as Partial<LockOwner>;
    if (typeof owner.pid !== "number" || typeof owner.host !== "string") return undefined;
    return owner as LockOwner;
  } catch {
    return undefined;
  }
}

async function isOldFile(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return !info || Date.now() - info.mtimeMs > UNREADABLE_STALE_MS;
}

function isStale(owner: LockOwner): boolean {
  const age = Date.now() - Date.parse(owner.started_at);
  if (!(age < STALE_AFTER_MS)) return true;
  return owner.host === hostname() && !isProcessAlive(owner.pid);
}

/**
 * Removes a stale lock unless another sync replaced it since it was read: two syncs that found
 * the same stale lock must not remove each other's fresh one (a gap of microseconds remains
 * between this read and the removal; a file system offers no conditional unlink).
 */
async function removeIfUnchanged(path: string, stale: LockOwner | undefined): Promise<void> {
  const now = await readOwner(path);
  if (now?.token === stale?.token) await rm(path, { force: true });
}

async function releaseIfOwned(path: string, token: string): Promise<void> {
  const held = await readOwner(path);
  if (held?.token === token) await rm(path, { force: true });
}
