import { type FileHandle, open, rename } from "node:fs/promises";
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

/**
 * Starts flushing a file being written every `everyBytes`, without waiting: the disk takes the
 * bytes while the writer goes on, and the fsync that ends the file has only the tail left to
 * wait for. At most one flush runs at a time. A failed flush fails settle(): after an fsync
 * error Linux may report the next fsync as clean although the data never reached the disk.
 */
export class BackgroundFlush {
  private sinceFlush = 0;
  private running: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly handle: FileHandle,
    private readonly everyBytes = 16 << 20,
  ) {}

  /** Counts bytes handed to the file system; may start a flush. */
  wrote(bytes: number): void {
    this.sinceFlush += bytes;
    if (this.sinceFlush < this.everyBytes || this.running) return;
    this.sinceFlush = 0;
    this.running = this.handle
      .datasync()
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Waits for a flush in progress (before the final sync); throws if any flush failed. */
  async settle(): Promise<void> {
    await this.running;
    if (this.failure !== undefined) throw this.failure;
  }
}
