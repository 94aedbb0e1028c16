import { open } from "node:fs/promises";

/** The end of central directory record: its signature, and its size without a comment. */
const END_SIGNATURE = 0x06054b50;
const END_SIZE = 22;
const ENTRY_SIGNATURE = 0x02014b50;
const ENTRY_SIZE = 46;
/** A comment is at most 65,535 bytes: the end record is within that of the file's end. */
const TAIL_BYTES = END_SIZE + 0xffff;
/** More central directory than a workbook has: such a file is not read for sizes. */
const MAX_DIRECTORY_BYTES = 16 * 2 ** 20;

/** Where the end record starts in `tail`, searching back from the end; -1 when none. */
function endRecordAt(tail: Buffer): number {
  for (let at = tail.length - END_SIZE; at >= 0; at--)
    if (tail.readUInt32LE(at) === END_SIGNATURE) return at;
  return -1;
}

/** An entry of a zip's central directory: its name, and its sizes as the directory states them. */
export interface ZipEntryInfo {
  name: string;
  /** Uncompressed. */
  size: number;
  compressedSize: number;
}

/** Each entry's name and sizes from the central directory's bytes. */
function directoryEntries(directory: Buffer, count: number): ZipEntryInfo[] {
  const entries: ZipEntryInfo[] = [];
  let at = 0;
  for (let i = 0; i < count && at + ENTRY_SIZE <= directory.length; i++) {
    if (directory.readUInt32LE(at) !== ENTRY_SIGNATURE) break;
    const compressedSize = directory.readUInt32LE(at + 20);
    const size = directory.readUInt32LE(at + 24);
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const name = directory.toString("utf8", at + ENTRY_SIZE, at + ENTRY_SIZE + nameLength);
    entries.push({ name, size, compressedSize });
    at += ENTRY_SIZE + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * The entries of a zip file as its central directory states them (a streaming writer leaves
 * the sizes out of the entries' own headers), or undefined when the directory cannot be read
 * this way (zip64, damaged), never an error. What a directory states may be false: see
 * zip-limits.ts for what is done about that.
 */
export async function zipEntries(path: string): Promise<ZipEntryInfo[] | undefined> {
  const file = await open(path, "r").catch(() => undefined);
  if (file === undefined) return undefined;
  try {
    const { size } = await file.stat();
    const tailLength = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(tailLength);
    await file.read(tail, 0, tailLength, size - tailLength);
    const end = endRecordAt(tail);
    if (end === -1) return undefined;
    const count = tail.readUInt16LE(end + 10);
    const length = tail.readUInt32LE(end + 12);
    const offset = tail.readUInt32LE(end + 16);
    // 0xffffffff: the real values are in a zip64 record, which a workbook of this size has not.
    if (length > MAX_DIRECTORY_BYTES || offset === 0xffffffff || offset + length > size)
      return undefined;
    const directory = Buffer.alloc(length);
    await file.read(directory, 0, length, offset);
    return directoryEntries(directory, count);
  } catch {
    return undefined;
  } finally {
    await file.close();
  }
}

/**
 * The uncompressed size of each entry of a zip file, by name, from its central directory. For
 * progress only: a file whose directory cannot be read gives an empty map.
 */
export async function zipEntrySizes(path: string): Promise<Map<string, number>> {
  const entries = (await zipEntries(path)) ?? [];
  return new Map(entries.map((entry) => [entry.name, entry.size]));
}
