// docs/architecture/overview.md is the start-here page: the seven files to read first, in order,
// each a file of the repository, and where each kind of state lives: a row for each store of
// STORE_PLACES (test/helpers/store-places.ts), so a new store cannot go unmentioned.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { QUEUES } from "../../jobs/registry.js";
import { STORE_PLACES } from "../helpers/store-places.js";

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
    const where = section(page, "Where state lives");
    const places = [...where.matchAll(/^- \*\*([^*]+)\*\*/gm)];
    expect(places.map((place) => place[1])).toEqual([
      "Redis",
      "Files under the data dir",
      "PostgreSQL",
    ]);
    // Redis's queues, the maintenance queue's nightly job among them.
    for (const queue of Object.values(QUEUES)) expect(where).toContain(`\`${queue}\``);
  });

  it("has a row for each store openStores opens, as STORE_PLACES says where it lives", () => {
    const rows = section(page, "Where state lives")
      .split("\n")
      .filter(
        (line) =>
          line.startsWith("| ") && !line.startsWith("| Store ") && !line.startsWith("| ---"),
      )
      .map((line) => line.slice(2, -2).split(" | "));
    expect(rows).toEqual(STORE_PLACES.map((p) => [p.name, p.files, p.postgresql, p.holds]));
  });
});
