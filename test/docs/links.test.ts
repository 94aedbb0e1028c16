// The documentation's links and the code's citations of it stay true as files move:
// (a) every relative link of README.md and docs/**/*.md names a file that exists and, with a
// #anchor into a Markdown file, a heading of it (GitHub's anchor for the heading);
// (b) every comment that cites a section by heading, a docs page's path followed by a comma and
// the heading in double quotes, names a page that exists and a heading of that page. A citation
// may wrap: after its comma, or inside the heading, onto the next comment line (` * `, `// `,
// `-- `, `# `).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

/** Files under `dir` (relative to the root) whose names end with one of `extensions`. */
function filesUnder(dir: string, extensions: string[]): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    const path = join(ROOT, at);
    if (!existsSync(path)) return;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const child = join(at, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (extensions.some((ext) => entry.name.endsWith(ext))) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

/** The text with fenced code blocks blanked out (newlines kept, so offsets stay lines). */
function withoutFences(text: string): string {
  return text.replace(/^( {0,3})(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, (block) =>
    block.replace(/[^\n]/g, " "),
  );
}

/** The text with inline code spans blanked out too: a link inside backticks is not a link. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, " "));
}

/** A heading's text as read: inline code, links and emphasis marks taken off. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*_]/g, "")
    .trim();
}

/** The headings of a Markdown file, outside code blocks. */
function headings(text: string): string[] {
  return [...withoutFences(text).matchAll(/^ {0,3}#{1,6}[ \t]+(.+)$/gm)].map((m) =>
    headingText(m[1]!),
  );
}

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces to dashes. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(text)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

const markdownCache = new Map<string, string>();
function readMarkdown(path: string): string {
  let text = markdownCache.get(path);
  if (text === undefined) {
    text = readFileSync(path, "utf8");
    markdownCache.set(path, text);
  }
  return text;
}

/** What is wrong with a link of `file` to `target`, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  const [rawPath = "", anchor] = target.split("#", 2) as [string, string | undefined];
  const path =
    rawPath === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(rawPath));
  if (!existsSync(path)) return `${target}: no file ${relative(ROOT, path)}`;
  if (anchor === undefined || !path.endsWith(".md")) return undefined;
  if (!anchors(readMarkdown(path)).has(decodeURIComponent(anchor).toLowerCase()))
    return `${target}: no heading of ${relative(ROOT, path)} has the anchor #${anchor}`;
  return undefined;
}

const DOCS = ["README.md", ...filesUnder("docs", [".md"])];

describe("documentation links", () => {
  it("finds the pages", () => {
    expect(DOCS.length).toBeGreaterThan(1);
  });

  it.each(DOCS)("every relative link of %s resolves", (file) => {
    const text = readMarkdown(join(ROOT, file));
    const code = withoutCode(text);
    const problems: string[] = [];
    // [text](target) and [text](target "title"); the text may wrap onto the next line.
    for (const m of code.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const problem = brokenLink(file, target);
      if (problem) problems.push(`${file}:${lineOf(text, m.index)}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});

/** A comment line's start once the line breaks: spaces, then `*`, `//`, `--` or `#`. */
const NEXT_LINE = String.raw`[ \t]*\n[ \t]*(?:\*(?!/)|//|--|#)?[ \t]*`;
const CITATION = new RegExp(
  String.raw`(docs/[\w/.-]+\.md),(?:[ \t]*|${NEXT_LINE})"((?:[^"\n]|${NEXT_LINE})+)"`,
  "g",
);

/** A heading as a citation may write it: any case, spaces collapsed, no trailing punctuation. */
const comparable = (heading: string) =>
  heading
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.,:;!?]+$/, "")
    .toLowerCase();

interface Citation {
  where: string;
  page: string;
  heading: string;
}

function citations(): Citation[] {
  const files = [
    ...["src", "jobs", "test", "scripts"].flatMap((dir) =>
      filesUnder(dir, [".ts", ".js", ".mjs", ".cjs", ".sh", ".lua"]),
    ),
    ".dependency-cruiser.cjs",
  ].filter((file) => file !== THIS_FILE && existsSync(join(ROOT, file)));
  const found: Citation[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(CITATION)) {
      const heading = m[2]!.replace(new RegExp(NEXT_LINE, "g"), " ");
      found.push({ where: `${file}:${lineOf(text, m.index)}`, page: m[1]!, heading });
    }
  }
  return found;
}

describe("citations of the documentation in the code", () => {
  const all = citations();

  it("finds the citations", () => {
    expect(all.length).toBeGreaterThan(10);
  });

  it("each names a page that exists and a heading of it", () => {
    const problems: string[] = [];
    for (const { where, page, heading } of all) {
      const path = join(ROOT, page);
      if (!existsSync(path)) {
        problems.push(`${where}: ${page}, "${heading}": no such page`);
        continue;
      }
      const wanted = comparable(heading);
      if (!headings(readMarkdown(path)).some((h) => comparable(h) === wanted))
        problems.push(`${where}: ${page}, "${heading}": no such heading in ${page}`);
    }
    expect(problems).toEqual([]);
  });
});
