import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { packageRoot } from "../package-root.js";

/**
 * Reads a Lua script kept in a `.lua` file (src/ledger/lua/, src/catalog/lua/, src/webhooks/lua/)
 * and expands its includes. `path` is absolute, or relative to the package root
 * (`src/ledger/lua/start.lua`): the files are read from the source tree there, whether giftjobs
 * runs from src/ (tsx) or from the compiled dist/src/ (`npm run build` compiles TypeScript only:
 * dist/ holds no `.lua` file).
 *
 * A line `--- @include "includes/counts"` is replaced with the text of `includes/counts.lua`,
 * relative to the file holding the line, itself expanded the same way (the form of bullmq's
 * `src/commands/*.lua`). A file is included once per script: a later include of it is dropped,
 * its functions being defined already. An include of a missing file, an include of a file being
 * expanded (a cycle) and a line that starts like an include but is not one throw an Error.
 */
export function readLuaScript(path: string): string {
  const file = isAbsolute(path) ? path : join(packageRoot(), path);
  if (!existsSync(file)) throw new Error(`Lua script not found: ${file}`);
  return expand(file, [], new Set([file]));
}

/** A line meant as an include (`--- @include`), well formed or not. */
const INCLUDE_LIKE = /^\s*---\s*@include\b/;
const INCLUDE = /^\s*---\s*@include\s+"([^"]+)"\s*$/;

/**
 * The text of `file` with its includes expanded. `stack`: the files whose expansion is under way
 * (a cycle when one is included again); `included`: every file in the script so far.
 */
function expand(file: string, stack: string[], included: Set<string>): string {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (!INCLUDE_LIKE.test(line)) {
      out.push(line);
      continue;
    }
    const name = INCLUDE.exec(line)?.[1];
    if (name === undefined) {
      throw new Error(
        `${shown(file)}:${index + 1}: not an include of the form --- @include "path": ${line}`,
      );
    }
    const target = resolve(dirname(file), name.endsWith(".lua") ? name : `${name}.lua`);
    if (target === file || stack.includes(target)) {
      const chain = [...stack, file, target].map(shown).join(" -> ");
      throw new Error(`Lua include cycle: ${chain}`);
    }
    if (included.has(target)) continue;
    if (!existsSync(target)) {
      throw new Error(
        `${shown(file)}:${index + 1} includes "${name}", but ${shown(target)} does not exist`,
      );
    }
    included.add(target);
    out.push(expand(target, [...stack, file], included).replace(/\n$/, ""));
  }
  return out.join("\n");
}

/** A file's path as errors name it: relative to the package root when under it. */
function shown(file: string): string {
  const path = relative(packageRoot(), file);
  const outside = path === ".." || path.startsWith(`..${sep}`) || isAbsolute(path);
  return path === "" || outside ? file : path;
}
