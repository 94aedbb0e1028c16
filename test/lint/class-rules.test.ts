import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLASS = /\bclass\s+(\w+)(?:<[^>{]*>)?\s+extends\s+(\w+)/g;

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe("the classes of src/ and jobs/ (docs/architecture/overview.md, Conventions)", () => {
  it("extend no class of the project but errors: larger parts are composed", async () => {
    const bases = new Map<string, { base: string; file: string }>();
    for (const file of [...(await sourceFiles("src")), ...(await sourceFiles("jobs"))]) {
      const text = await readFile(join(ROOT, file), "utf8");
      for (const [, name, base] of text.matchAll(CLASS)) bases.set(name!, { base: base!, file });
    }
    expect(bases.size).toBeGreaterThan(10);
    const rootOf = (name: string): string => {
      const entry = bases.get(name);
      return entry ? rootOf(entry.base) : name;
    };
    const broken = [...bases]
      .filter(([, { base }]) => bases.has(base) && rootOf(base) !== "Error")
      .map(([name, { base, file }]) => `${file}: ${name} extends ${base}`);
    expect(broken).toEqual([]);
  });
});
