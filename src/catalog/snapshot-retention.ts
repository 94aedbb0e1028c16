import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { snapshotsDir } from "./snapshot-layout.js";

/**
 * Removes all but the newest `keep` snapshots; never `current`, whatever its age. Names start
 * with their ISO time, so name order is time order. Returns the names removed.
 */
export async function pruneSnapshots(
  dataDir: string,
  keep: number,
  current: string,
): Promise<string[]> {
  const dir = snapshotsDir(dataDir);
  const names = (await readdir(dir)).sort();
  const old = names.slice(0, Math.max(0, names.length - keep)).filter((n) => n !== current);
  for (const name of old) await rm(join(dir, name), { recursive: true, force: true });
  return old;
}
