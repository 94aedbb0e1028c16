import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";

/** Flushes a file or directory to disk, so that a rename that follows survives a power cut. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems refuse fsync on directories; the data files were flushed already.
    if ((error as NodeJS.ErrnoException).code !== "EINVAL") throw error;
  } finally {
    await handle.close();
  }
}

/** Writes a file whole and flushes it. */
export async function writeFileSynced(path: string, text: string): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` atomically: readers see the old content or the new, never a mix
 * (write `path.tmp`, flush, rename over, flush the directory).
 */
export async function replaceFileAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFileSynced(tmp, text);
  await rename(tmp, path);
  await fsyncPath(dirname(path));
}
