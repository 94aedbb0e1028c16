import { createWriteStream } from "node:fs";
import { type FileHandle, mkdtemp, open, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { UserError } from "../../errors/user-error.js";

/** How much of a file tells what it is (order-file.ts, orderFileKind). */
const SAMPLE_BYTES = 64 * 1024;

/**
 * An order file opened for reading: its first bytes, and the path its readers open. A regular
 * file is read where it is. A pipe or a device (`<(...)`, /dev/stdin, /dev/zero) can be read
 * only once, so its first bytes are read alone (a refusal then reads nothing more) and, when it
 * is a sheet, `keep` copies it whole to a private temporary file that the readers open
 * (docs/architecture/import.md, "Spreadsheets", "Pipes and devices").
 */
export interface OrderInput {
  sample: Buffer;
  /** The path to read the sheet from; call once the sample is accepted. */
  keep(): Promise<string>;
  /** Closes the file and removes the copy; safe to call at any point. */
  dispose(): Promise<void>;
}

function readError(label: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR" || code === "ENXIO")
    return new UserError(`cannot read ${label}: ${(error as Error).message}`);
  return error as Error;
}

/** Up to SAMPLE_BYTES from where the handle is: a pipe gives its bytes a chunk at a time. */
async function readStart(handle: FileHandle, position: number | null): Promise<Buffer> {
  const buffer = Buffer.alloc(SAMPLE_BYTES);
  let filled = 0;
  while (filled < SAMPLE_BYTES) {
    const at = position === null ? null : position + filled;
    const { bytesRead } = await handle.read(buffer, filled, SAMPLE_BYTES - filled, at);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Opens an order file and reads its first bytes (see OrderInput). */
export async function openOrderInput(path: string, label: string): Promise<OrderInput> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw readError(label, error);
  }
  try {
    const regular = (await handle.stat()).isFile();
    const sample = await readStart(handle, regular ? 0 : null);
    if (regular) {
      await handle.close();
      return { sample, keep: async () => path, dispose: async () => {} };
    }
    return streamInput(handle, sample);
  } catch (error) {
    await handle.close();
    throw readError(label, error);
  }
}

/** A pipe or device: copied, its sample first, to a temporary file only when kept. */
function streamInput(handle: FileHandle, sample: Buffer): OrderInput {
  let dir: string | undefined;
  return {
    sample,
    async keep() {
      dir = await mkdtemp(join(tmpdir(), "giftjobs-input-"));
      const copy = join(dir, "input");
      const out = createWriteStream(copy, { mode: 0o600 });
      out.write(sample);
      await pipeline(handle.createReadStream({ autoClose: false }), out);
      return copy;
    },
    async dispose() {
      await handle.close().catch(() => {});
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The size of `path` when it is a regular file; undefined for a pipe, a device (`<(...)`,
 * /dev/stdin) or nothing there: only a regular file can be told by its size, or read twice.
 */
export async function regularFileSize(path: string): Promise<number | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info?.isFile() ? info.size : undefined;
}
