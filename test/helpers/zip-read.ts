import { readFile } from "node:fs/promises";
import { inflateRawSync } from "node:zlib";

/**
 * The entries of a zip whose names match `pattern`, as text, read with nothing but the zip's
 * central directory and zlib (stored or deflated entries; no zip64): for tests that take a
 * workbook's parts apart without the reader under test.
 */
export async function zipEntryTexts(path: string, pattern: RegExp): Promise<Map<string, string>> {
  const zip = await readFile(path);
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error(`${path}: no zip end record`);
  const count = zip.readUInt16LE(end + 10);
  const texts = new Map<string, string>();
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + skip;
    if (!pattern.test(name)) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + compressedSize);
    texts.set(name, (method === 8 ? inflateRawSync(data) : data).toString("utf8"));
  }
  return texts;
}
