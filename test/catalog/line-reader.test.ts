import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readLineBatches, readNumberedLineBatches } from "../../src/catalog/line-reader.js";
import { tmpDir } from "../helpers/tmp-dir.js";

async function linesOf(text: string, options: { end?: number } = {}): Promise<string[]> {
  const path = join(await tmpDir("line-reader"), "lines.txt");
  await writeFile(path, text);
  const lines: string[] = [];
  for await (const batch of readLineBatches(path, options)) lines.push(...batch);
  return lines;
}

describe("readLineBatches", () => {
  it("gives back every line of a file of many chunks, lines cut at any byte", async () => {
    // Lines of every length from 0 to 299, with characters of one to four bytes of UTF-8, so
    // chunk ends fall inside lines and inside characters.
    const characters = [..."aé€😀"];
    const expected = Array.from({ length: 3000 }, (_, i) =>
      Array.from({ length: i % 300 }, (_, j) => characters[j % 4]).join(""),
    );
    expect(await linesOf(`${expected.join("\n")}\n`)).toEqual(expected);
  });

  it("gives back a line longer than many chunks whole, and a last line without a newline", async () => {
    const long = "x".repeat(300_000) + "€".repeat(100_000);
    expect(await linesOf(`first\n${long}\nlast`)).toEqual(["first", long, "last"]);
    expect(await linesOf(long)).toEqual([long]);
    expect(await linesOf("\n\n")).toEqual(["", ""]);
    expect(await linesOf("")).toEqual([]);
  });

  it("stops at `end`, and reads an open handle from its start", async () => {
    expect(await linesOf("one\ntwo\nthree\n", { end: 8 })).toEqual(["one", "two"]);
    const path = join(await tmpDir("line-reader"), "numbered.txt");
    const text = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}`).join("\n");
    await writeFile(path, `${text}\n`);
    const handle = await open(path, "r");
    // Read from its start, wherever the handle's position is.
    await handle.read(Buffer.alloc(100), 0, 100, null);
    try {
      const seen: string[] = [];
      for await (const { lines, first } of readNumberedLineBatches(handle))
        for (const [i, line] of lines.entries()) {
          expect(line).toBe(`line ${first + i}`);
          seen.push(line);
        }
      expect(seen.length).toBe(50_000);
    } finally {
      await handle.close();
    }
  });
});
