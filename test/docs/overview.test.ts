// docs/architecture/overview.md is the start-here page: the seven files to read first, in order,
// each a file of the repository, and where each kind of state lives.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PAGE = new URL("../../docs/architecture/overview.md", import.meta.url);

/** The text of a `## heading` section, up to the next one. */
function section(page: string, heading: string): string {
  const start = page.indexOf(`\n## ${heading}\n`);
  expect(start, `overview.md has no "## ${heading}"`).toBeGreaterThan(0);
  const rest = page.slice(start + heading.length + 5);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

describe("docs/architecture/overview.md, the start-here page", () => {
  const page = readFileSync(PAGE, "utf8");

  it("names seven files to read first, numbered in order, each one that exists", () => {
    const items = [...section(page, "Read first").matchAll(/^(\d+)\. \[([^\]]+)\]\(([^)]+)\)/gm)];
    expect(items.map((item) => Number(item[1]))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const [, , name, link] of items) {
      expect(link!.endsWith(name!), `${name} links to ${link}`).toBe(true);
      expect(existsSync(fileURLToPath(new URL(link!, PAGE))), `${name} exists`).toBe(true);
    }
  });

  it("says where each kind of state lives: Redis, the data dir's files, PostgreSQL", () => {
    const places = [...section(page, "Where state lives").matchAll(/^- \*\*([^*]+)\*\*/gm)];
    expect(places.map((place) => place[1])).toEqual([
      "Redis",
      "Files under the data dir",
      "PostgreSQL",
    ]);
    expect(page).not.toMatch(/Redis is the only state/);
  });
});
