import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
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
  const me: Holder = { pid: process.pid, host: hostname() };
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      await writeFile(path, JSON.stringify(me), { flag: "wx", mode: 0o600 });
      break;
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
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
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
