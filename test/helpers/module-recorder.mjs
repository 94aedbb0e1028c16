// Preloaded into a CLI child (`node --import`, after tsx) by test/cli/start-up.test.ts: writes
// every module the child loads after it, one a line, to the file MODULE_RECORD names. ES modules
// as the loader resolves them (module-recorder-hooks.mjs); CommonJS ones, createRequire's
// included, from require's cache at exit (those already there when this ran are left out: tsx's).
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const file = process.env.MODULE_RECORD;
if (file) {
  register(new URL("./module-recorder-hooks.mjs", import.meta.url), { data: { file } });
  const cache = createRequire(import.meta.url).cache;
  const before = new Set(Object.keys(cache));
  process.on("exit", () => {
    const loaded = Object.keys(cache).filter((path) => !before.has(path));
    appendFileSync(file, loaded.map((path) => `${path}\n`).join(""));
  });
}
