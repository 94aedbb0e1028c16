// docs/commands.md, "Every command and option", lists every command and option the program has.
// The program is read as commander knows it (buildProgram, in-process); the list is read from the
// page: each item is `giftjobs PATH ...`, the path's words in lower case, the options its `--x`.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

const PAGE = new URL("../../docs/commands.md", import.meta.url);
const SECTION = "## Every command and option";

/** Command path ("" for giftjobs itself, "orders import") to its long options. */
type Tree = Map<string, Set<string>>;

/** The commands commander runs (those without subcommands) and giftjobs itself, with options. */
function programTree(program: Command): Tree {
  const tree: Tree = new Map();
  const walk = (command: Command, path: string[]) => {
    // A hidden option is an old spelling kept only to be refused (`orders retry --force`).
    const shown = command.options.filter((option) => !option.hidden);
    const options = shown.map((option) => option.long).filter((long) => long);
    if (path.length === 0 || command.commands.length === 0 || options.length > 0)
      tree.set(path.join(" "), new Set(options as string[]));
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return tree;
}

/** The section's list: each item's first code span is the command's synopsis. */
function documentedTree(page: string): Tree {
  const start = page.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`docs/commands.md has no "${SECTION}" section`);
  const rest = page.slice(start + SECTION.length + 2);
  const section = rest.slice(0, rest.search(/\n## /) < 0 ? undefined : rest.search(/\n## /));
  const tree: Tree = new Map();
  for (const item of section.split(/\n(?=- )/)) {
    const synopsis = /^- `(giftjobs[^`]*)`/.exec(item.trim())?.[1];
    if (!synopsis) continue;
    const words = synopsis.split(/\s+/).slice(1);
    const path: string[] = [];
    for (const word of words) {
      if (!/^[a-z][a-z-]*$/.test(word)) break;
      path.push(word);
    }
    const options = new Set(synopsis.match(/--[a-z][a-z-]*/g) ?? []);
    const key = path.join(" ");
    if (tree.has(key)) throw new Error(`docs/commands.md lists "giftjobs ${key}" twice`);
    tree.set(key, options);
  }
  return tree;
}

/** What differs, one line each, naming the command and the option. */
function differences(program: Tree, documented: Tree): string[] {
  const found: string[] = [];
  const name = (path: string) => `giftjobs${path ? ` ${path}` : ""}`;
  for (const [path, options] of program) {
    const listed = documented.get(path);
    if (!listed) {
      found.push(`missing command: ${name(path)}`);
      continue;
    }
    for (const option of options)
      if (!listed.has(option)) found.push(`missing option: ${name(path)} ${option}`);
    for (const option of listed)
      if (!options.has(option)) found.push(`stale option: ${name(path)} ${option}`);
  }
  for (const path of documented.keys())
    if (!program.has(path)) found.push(`stale command: ${name(path)}`);
  return found;
}

describe("docs/commands.md lists every command and option", () => {
  it("has each of the program's commands and options, and none it does not have", () => {
    const page = readFileSync(PAGE, "utf8");
    const documented = documentedTree(page);
    const program = programTree(buildProgram());
    expect(program.size).toBeGreaterThan(30);
    expect(differences(program, documented)).toEqual([]);
  });

  it("names a command or option missing from the page, and one the program no longer has", () => {
    const program: Tree = new Map([
      ["orders import", new Set(["--campaign", "--from-report"])],
      ["db import-journals", new Set(["--data-dir"])],
    ]);
    const page = [
      "# Commands",
      SECTION,
      "",
      "- `giftjobs orders import FILE --campaign NAME [--allow-example]`: import.",
      "- `giftjobs orders frobnicate [--json]`",
      "## Next",
      "- `giftjobs db import-journals [--data-dir DIR]`",
    ].join("\n");
    expect(differences(program, documentedTree(page))).toEqual([
      "missing option: giftjobs orders import --from-report",
      "stale option: giftjobs orders import --allow-example",
      "missing command: giftjobs db import-journals",
      "stale command: giftjobs orders frobnicate",
    ]);
  });
});
