import { createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/**
 * The lines of a UTF-8 file in batches (one per CHUNK_BYTES chunk): one await per chunk instead
 * of one per line makes it several times faster than node:readline on the 100k-line files of a
 * snapshot. Holds a chunk at a time, and a line longer than a chunk as its pieces until it ends.
 * `end` stops at a byte offset (exclusive). An open file handle is read from its start; the
 * stream closes it once read (a second read of it fails), and closing it again does nothing.
 */
export async function* readLineBatches(
  file: string | FileHandle,
  options: { end?: number } = {},
): AsyncGenerator<string[]> {
  if (options.end !== undefined && options.end <= 0) return;
  const streamOptions = {
    encoding: "utf8" as const,
    highWaterMark: CHUNK_BYTES,
    end: options.end === undefined ? undefined : options.end - 1,
  };
  const stream =
    typeof file === "string"
      ? createReadStream(file, streamOptions)
      : file.createReadStream({ ...streamOptions, start: 0, autoClose: false });
  // The start of a line not ended yet, in the pieces of it each chunk held: joined once at its
  // end, not added to chunk after chunk (a line of many chunks would be copied again each time).
  let rest: string[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const lines: string[] = [];
      let start = 0;
      for (let nl = chunk.indexOf("\n"); nl !== -1; nl = chunk.indexOf("\n", start)) {
        const line = chunk.slice(start, nl);
        if (rest.length === 0) lines.push(line);
        else {
          rest.push(line);
          lines.push(rest.join(""));
          rest = [];
        }
        start = nl + 1;
      }
      if (start < chunk.length) rest.push(chunk.slice(start));
      if (lines.length > 0) yield lines;
    }
    if (rest.length > 0) yield [rest.join("")];
  } finally {
    stream.destroy();
  }
}

/**
 * 32 KiB: a chunk's text stays under V8's 128 KB for an ordinary heap object even at two bytes a
 * character. Chunks of 1 MiB were each a string in its large-object space, which every line cut
 * from it kept alive; an import's pass 2 reads its spool through here (docs/architecture/import.md,
 * "Strings of a batch").
 */
const CHUNK_BYTES = 1 << 15;

/** readLineBatches with the number (from 1) of each batch's first line, for error messages. */
export async function* readNumberedLineBatches(
  file: string | FileHandle,
  options: { end?: number } = {},
): AsyncGenerator<{ lines: string[]; first: number }> {
  let first = 1;
  for await (const lines of readLineBatches(file, options)) {
    yield { lines, first };
    first += lines.length;
  }
}

/** Whether the file ends with a newline; undefined when there is no file (or it is empty). */
export async function endsWithNewline(path: string): Promise<boolean | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return undefined;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    await handle.close();
  }
}
