import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive } from "./process-alive.js";
import { catalogDir, currentPointerPath, SNAPSHOT_FILES, tmpOwnerPid } from "./snapshot-layout.js";

/** Temporary directories this process is writing now: never cleaned from under it. */
const activeTmpDirs = new Set<string>();

export function markTmpDirActive(path: string, active: boolean): void {
  if (active) activeTmpDirs.add(path);
  else activeTmpDirs.delete(path);
}

export interface CleanupOptions {
  /** A directory to keep whatever it looks like (the one being resumed). */
  keep?: string;
  /**
   * How long a checkpointed directory of a dead process is kept for its job to resume.
   * @defaultValue 24 hours
   */
  checkpointTtlMs?: number;
  /** After this long without a write, a directory is abandoned whoever owns it. @defaultValue 24 hours */
  staleAfterMs?: number;
}

/**
 * Removes what failed or killed syncs left behind: `tmp-<pid>-*` directories of processes that
 * are gone (or of this process, when not in use), and a stray `current.json.tmp`. A directory
 * holding a recent checkpoint is kept: its job resumes from it when the queue retries it.
 * Returns the names removed.
 */
export async function cleanLeftovers(
  dataDir: string,
  options: CleanupOptions = {},
): Promise<string[]> {
  const dir = catalogDir(dataDir);
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return removed;
    throw error;
  }
  for (const name of names) {
    const path = join(dir, name);
    const pid = tmpOwnerPid(name);
    if (pid === undefined || path === options.keep || activeTmpDirs.has(path)) continue;
    if (await isAbandoned(path, pid, options)) {
      await rm(path, { recursive: true, force: true });
      removed.push(name);
    }
  }
  await rm(`${currentPointerPath(dataDir)}.tmp`, { force: true });
  return removed;
}

async function isAbandoned(path: string, pid: number, options: CleanupOptions): Promise<boolean> {
  const lastWrite = await newestMtime(path);
  const idleMs = Date.now() - lastWrite;
  if (idleMs > (options.staleAfterMs ?? 86_400_000)) return true;
  if (pid !== process.pid && isProcessAlive(pid)) return false;
  const checkpoint = await stat(join(path, SNAPSHOT_FILES.checkpoint)).catch(() => undefined);
  if (checkpoint && Date.now() - checkpoint.mtimeMs < (options.checkpointTtlMs ?? 86_400_000)) {
    return false;
  }
  return true;
}

async function newestMtime(dir: string): Promise<number> {
  let newest = (await stat(dir)).mtimeMs;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && info.mtimeMs > newest) newest = info.mtimeMs;
  }
  return newest;
}
