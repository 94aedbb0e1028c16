import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SLOW_FILES, slowRank } from "../helpers/slow-first.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The files of docs/development.md's table of the slowest, in its order. */
function documentedSlowFiles(): string[] {
  const text = readFileSync(join(ROOT, "docs/development.md"), "utf8");
  return [...text.matchAll(/^\s*\| `(test\/[^`]+\.test\.ts)` \|/gm)].map((m) => m[1] as string);
}

describe("the files the suite starts first (test/helpers/slow-first.ts)", () => {
  it("are the files docs/development.md names as the slowest, in its order", () => {
    expect(SLOW_FILES).toEqual(documentedSlowFiles());
  });

  it("all exist: a renamed file would otherwise quietly go back to vitest's order", () => {
    for (const file of SLOW_FILES) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it("rank a listed file by its place and any other after them all", () => {
    expect(slowRank(join(ROOT, "test/soak/paid-once.test.ts"))).toBe(0);
    expect(slowRank(join(ROOT, "test/worker/service-outage.test.ts"))).toBe(9);
    expect(slowRank(join(ROOT, "test/money.test.ts"))).toBe(SLOW_FILES.length);
    // A file whose path only ends like a listed one's name is not that file.
    expect(slowRank(join(ROOT, "test/other-readme.test.ts"))).toBe(SLOW_FILES.length);
  });
});
