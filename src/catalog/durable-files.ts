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

/**
 * A snapshot file written front to back: each write counts toward a BackgroundFlush, and
 * finish() makes it durable. create() closes the file again when its head cannot be written
 * (a full disk), so a writer that fails to start leaves no handle open.
 */
export class StreamedFile {
  private readonly flush: BackgroundFlush;

  private constructor(private readonly handle: FileHandle) {
    this.flush = new BackgroundFlush(handle);
  }

  static async create(path: string, head?: string | Uint8Array): Promise<StreamedFile> {
    const file = new StreamedFile(await open(path, "w"));
    if (head === undefined) return file;
    try {
      await file.write(typeof head === "string" ? head : [head]);
    } catch (error) {
      await file.abort();
      throw error;
    }
    return file;
  }

  /** Writes a text, or buffers in one writev (one trip to the thread pool). */
  async write(data: string | readonly Uint8Array[]): Promise<void> {
    if (typeof data === "string") {
      await this.handle.write(data);
      // Characters, not bytes: near enough to decide when to flush.
      this.flush.wrote(data.length);
      return;
    }
    let total = 0;
    for (const buffer of data) total += buffer.length;
    let offset = (await this.handle.writev(data as Uint8Array[])).bytesWritten;
    if (offset < total) {
      // A short write (rare for a file) goes on from where it stopped.
      const rest = Buffer.concat(data);
      while (offset < total) {
        offset += (await this.handle.write(rest, offset, total - offset)).bytesWritten;
      }
    }
    this.flush.wrote(total);
  }

  /** Waits for any background flush, flushes the rest and closes. */
  async finish(): Promise<void> {
    await this.flush.settle();
    await this.handle.sync();
    await this.handle.close();
  }

  /** Closes without finishing (a failed sync). */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
