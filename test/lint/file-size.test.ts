import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** A file past this does more than one thing (docs/architecture/layers-and-layout.md, "Layout"). */
const MAX_LINES = 500;

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(ts|lua)$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe("the source tree", () => {
  it(`has no file over ${MAX_LINES} lines in src/ or jobs/`, async () => {
    const files = [...(await sourceFiles("src")), ...(await sourceFiles("jobs"))];
    expect(files.length).toBeGreaterThan(100);
    const long: string[] = [];
    for (const file of files) {
      const lines = (await readFile(join(ROOT, file), "utf8")).split("\n").length - 1;
      if (lines > MAX_LINES) long.push(`${file}: ${lines} lines`);
    }
    expect(long).toEqual([]);
  });

  // The README's first screen is what a newcomer reads: what giftjobs is and the two commands
  // (test/readme.test.ts runs them and the walk-through). Its length is no test's business.
  it("has a README whose first screen holds the demo and the test command", async () => {
    const firstScreen = (await readFile(join(ROOT, "README.md"), "utf8")).split("\n").slice(0, 12);
    expect(firstScreen.some((line) => line.startsWith("npm ci && npx giftjobs demo"))).toBe(true);
    expect(firstScreen.some((line) => line.startsWith("npm test"))).toBe(true);
  });
});
