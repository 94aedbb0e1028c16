// A bench's figures written where a reader finds them: `npm run bench -- NAME --write` writes the
// tables the bench printed into docs/benchmarks/NAME.md, the whole page, so figures are never
// edited by hand (docs/development.md). The benches hand their tables to figure() as they print.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One table of a bench: what it measured, its rows (the first the header), lines under it. */
export interface Figure {
  title: string;
  rows: string[][];
  notes: string[];
}

/** What the page says of the run: when, on what load, with which command. */
export interface RunAbout {
  date: string;
  load: string;
  node: string;
  command: string;
}

const recorded: Figure[] = [];

/** Keeps a table for the page `--write` writes; the bench prints it itself as before. */
export function figure(title: string, rows: string[][], notes: string[] = []): void {
  recorded.push({ title, rows, notes });
}

/** Adds a line under the last table kept (a verdict, a ratio); prints nothing. */
export function figureNote(line: string): void {
  recorded.at(-1)?.notes.push(line);
}

/** Prints a table in padded columns under `indent`, and keeps it under `title` for `--write`. */
export function printFigure(title: string, rows: string[][], indent = ""): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)) + 2);
  for (const row of rows)
    process.stdout.write(
      `${indent}${row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("")
        .trimEnd()}\n`,
    );
  figure(title, rows);
}

/** Prints lines under the last table, and keeps them under it for `--write`. */
export function printNotes(lines: readonly string[], indent = ""): void {
  for (const line of lines) {
    process.stdout.write(`${indent}${line}\n`);
    figureNote(line);
  }
}

/** The tables kept since the last call, and none kept after it. */
export function takeFigures(): Figure[] {
  return recorded.splice(0);
}

/** `npm run bench -- import campaigns --write`: the benches named, and whether to write. */
export function benchArgs(argv: readonly string[]): { names: string[]; write: boolean } {
  return { names: argv.filter((arg) => arg !== "--write"), write: argv.includes("--write") };
}

/** A Markdown table; a `|` in a cell is escaped. */
export function markdownTable(rows: readonly string[][]): string {
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
  const [header, ...body] = rows;
  if (!header) return "";
  return [line(header), line(header.map(() => "---")), ...body.map(line)].join("\n");
}

/** The page of one bench's figures. */
export function figuresPage(bench: string, figures: readonly Figure[], about: RunAbout): string {
  const parts = [
    `# Benchmark figures: ${bench}`,
    `Written by \`${about.command}\` on ${about.date} (node ${about.node}, ${about.load} at the end); ` +
      "do not edit by hand: run the bench again with `--write`. What each bench measures: " +
      "[Benchmarks](../benchmarks.md).",
    ...figures.map((f) =>
      [`## ${f.title}`, markdownTable(f.rows), ...f.notes.map((n) => `- ${n}`)]
        .filter((part) => part !== "")
        .join("\n\n"),
    ),
  ];
  return `${parts.join("\n\n")}\n`;
}

/** Writes docs/benchmarks/BENCH.md below `root`; returns its path. */
export function writeFiguresPage(root: string, bench: string, page: string): string {
  const dir = join(root, "docs", "benchmarks");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${bench}.md`);
  writeFileSync(path, page);
  return path;
}
