import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  benchArgs,
  figure,
  figureNote,
  figuresPage,
  markdownTable,
  takeFigures,
  writeFiguresPage,
} from "../helpers/bench-figures.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const ABOUT = {
  date: "2026-11-28 14:00",
  load: "load 1.00 0.90 0.80",
  node: "v20.20.2",
  command: "npm run bench -- import --write",
};

describe("benchArgs", () => {
  it("takes --write out of the bench names, wherever it stands", () => {
    expect(benchArgs(["import", "--write", "campaigns"])).toEqual({
      names: ["import", "campaigns"],
      write: true,
    });
    expect(benchArgs(["orders"])).toEqual({ names: ["orders"], write: false });
  });
});

describe("markdownTable", () => {
  it("writes the header, its rule and the rows, a | in a cell escaped", () => {
    expect(
      markdownTable([
        ["", "time"],
        ["import", "1.5 s"],
        ["a|b", "2 s"],
      ]),
    ).toBe(["|  | time |", "| --- | --- |", "| import | 1.5 s |", "| a\\|b | 2 s |"].join("\n"));
  });
});

describe("the figures a bench hands over", () => {
  it("are the tables kept since the last take, each with the notes written under it", () => {
    figure("before the run", [["x"]]);
    takeFigures();
    figure("CSV, round 1", [
      ["", "time"],
      ["import", "20.0 s"],
    ]);
    figureNote("import / floor, time: 1.80x (1 round) (goal <= 2x: met)");
    expect(takeFigures()).toEqual([
      {
        title: "CSV, round 1",
        rows: [
          ["", "time"],
          ["import", "20.0 s"],
        ],
        notes: ["import / floor, time: 1.80x (1 round) (goal <= 2x: met)"],
      },
    ]);
    expect(takeFigures()).toEqual([]);
  });
});

describe("the page --write writes", () => {
  it("says how it was written, then each table under its title with its notes", () => {
    const page = figuresPage(
      "import",
      [
        {
          title: "CSV, round 1",
          rows: [
            ["", "time"],
            ["import", "20.0 s"],
          ],
          notes: [],
        },
        { title: "CSV: ratios", rows: [], notes: ["import / floor, time: 1.80x"] },
      ],
      ABOUT,
    );
    expect(page).toContain("Written by `npm run bench -- import --write` on 2026-11-28 14:00");
    expect(page).toContain("load 1.00 0.90 0.80");
    expect(page).toContain("## CSV, round 1\n\n|  | time |\n| --- | --- |\n| import | 20.0 s |");
    expect(page).toContain("## CSV: ratios\n\n- import / floor, time: 1.80x\n");
  });

  it("lands in docs/benchmarks/NAME.md, replacing the page of the last run", async () => {
    const root = await tmpDir("bench-figures");
    writeFiguresPage(root, "campaigns", "old figures\n");
    const path = writeFiguresPage(root, "campaigns", "new figures\n");
    expect(path).toBe(join(root, "docs", "benchmarks", "campaigns.md"));
    expect(await readFile(path, "utf8")).toBe("new figures\n");
  });
});
