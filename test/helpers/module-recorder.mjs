// Preloaded into a CLI child (`node --import`, after tsx) by test/cli/start-up.test.ts: writes
// every module the child loads after it, one a line, to the file MODULE_RECORD names. ES modules
// as the loader resolves them (module-recorder-hooks.mjs); CommonJS ones, createRequire's
// included, from require's cache at exit (those already there when this ran are left out: tsx's).
// And the first call of each way into ICU (Intl's formatters, toLocaleString, localeCompare), as
// `intl:NAME`.
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
  noteIntl();
}

/**
 * Notes, as a line `intl:NAME`, the first call of each of the ways into ICU: the first of them
 * loads its locale data, some 20 ms of a command's start (src/grouped.ts).
 */
function noteIntl() {
  const noted = new Set();
  const note = (name) => {
    if (noted.has(name)) return;
    noted.add(name);
    appendFileSync(file, `intl:${name}\n`);
  };
  for (const name of ["DateTimeFormat", "NumberFormat", "Collator", "PluralRules", "ListFormat"]) {
    Intl[name] = new Proxy(Intl[name], {
      construct(target, args) {
        note(`Intl.${name}`);
        return Reflect.construct(target, args);
      },
      apply(target, self, args) {
        note(`Intl.${name}`);
        return Reflect.apply(target, self, args);
      },
    });
  }
  const methods = [
    [Number.prototype, "Number", "toLocaleString"],
    [BigInt.prototype, "BigInt", "toLocaleString"],
    [Date.prototype, "Date", "toLocaleString"],
    [Date.prototype, "Date", "toLocaleDateString"],
    [Date.prototype, "Date", "toLocaleTimeString"],
    [String.prototype, "String", "localeCompare"],
  ];
  for (const [proto, owner, method] of methods) {
    const original = proto[method];
    proto[method] = function (...args) {
      note(`${owner}.${method}`);
      return original.apply(this, args);
    };
  }
}
