// Benchmark figures are written by a bench's run, never by hand (docs/benchmarks.md, "Figures"):
// docs/benchmarks.md holds no table; each page under docs/benchmarks/ is named for a bench of
// test/bench/, reads back into the figures it was written from (figuresPage gives the same text)
// and is linked from docs/benchmarks.md; the page of earlier rounds is closed (its digest held);
// and each bench hands its tables to `--write`.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Figure, figuresPage, type RunAbout } from "../helpers/bench-figures.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = `${ROOT}docs/benchmarks/`;
const EARLIER = "earlier-rounds.md";
/** The page of the rounds recorded by hand before `--write`: closed, so its digest is fixed. */
const EARLIER_SHA256 = "4f7a1c701d5bcecfe6f6f08f97eebd9eb6448e568b805627217149dc539d483d";
const BENCHES = readdirSync(`${ROOT}test/bench/`)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts" && name !== "import-floor.ts")
  .map((name) => name.slice(0, -3));

const read = (path: string) => readFileSync(path, "utf8");
const written = () => readdirSync(PAGES).filter((name) => name !== EARLIER);

/** A table's line as cells: `| a | b\| c |` -> ["a", "b| c"]. */
function cells(line: string): string[] {
  return line
    .slice(2, -2)
    .split(/(?<!\\) \| /)
    .map((cell) => cell.replaceAll("\\|", "|"));
}

/** A figure read back from its `## title` section. */
function figureOf(section: string): Figure {
  const [title = "", ...parts] = section.split("\n\n");
  const table = parts.find((part) => part.startsWith("| "));
  const rows = table
    ? table
        .split("\n")
        .filter((_, i) => i !== 1)
        .map(cells)
    : [];
  const notes = parts
    .filter((part) => part.startsWith("- "))
    .flatMap((part) => part.split("\n").map((line) => line.slice(2)));
  return { title, rows, notes };
}

/** A written page read back into its bench, its figures and what it says of the run. */
function parsePage(text: string): { bench: string; figures: Figure[]; about: RunAbout } {
  const [top = "", ...sections] = text.trimEnd().split("\n\n## ");
  const bench = /^# Benchmark figures: (\S+)\n/.exec(top)?.[1] ?? "";
  const run = /Written by `(.+?)` on (.+?) \(node (\S+), (.+?) at the end\)/.exec(top);
  const about = {
    command: run?.[1] ?? "",
    date: run?.[2] ?? "",
    node: run?.[3] ?? "",
    load: run?.[4] ?? "",
  };
  return { bench, figures: sections.map(figureOf), about };
}

describe("docs/benchmarks.md", () => {
  it("holds no table of figures: they are on the pages the benches write", () => {
    const tables = read(`${ROOT}docs/benchmarks.md`)
      .split("\n")
      .filter((line) => line.startsWith("|"));
    expect(tables).toEqual([]);
  });

  it("links every page under docs/benchmarks/", () => {
    const page = read(`${ROOT}docs/benchmarks.md`);
    for (const name of readdirSync(PAGES)) expect(page).toContain(`](benchmarks/${name})`);
  });
});

describe("each page of figures", () => {
  it.each(written().map((name) => [name]))(
    "%s is one `npm run bench -- NAME --write` wrote",
    (name) => {
      const text = read(`${PAGES}${name}`);
      const { bench, figures, about } = parsePage(text);
      expect(bench).toBe(name.slice(0, -3));
      expect(BENCHES).toContain(bench);
      expect(about.command).toMatch(new RegExp(`npm run bench -- ${bench} --write$`));
      expect(figures.length).toBeGreaterThan(0);
      expect(figuresPage(bench, figures, about)).toBe(text);
    },
  );

  it("of the earlier rounds is closed: new figures come from --write", () => {
    const digest = createHash("sha256")
      .update(read(`${PAGES}${EARLIER}`))
      .digest("hex");
    expect(digest, `${EARLIER} is closed; run the bench with --write instead`).toBe(EARLIER_SHA256);
  });
});

describe("each bench", () => {
  it.each(BENCHES.map((name) => [name]))("%s hands its tables to --write", (name) => {
    const source = read(`${ROOT}test/bench/${name}.ts`);
    expect(source).toMatch(/\b(printFigure|figure)\(/);
  });
});
