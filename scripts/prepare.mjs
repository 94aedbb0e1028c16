// The prepare script (`npm ci`, `npm install`): compiles src/ into dist/src/ (the library's
// modules and types), then bundles the CLI into dist/cli/, which bin/giftjobs.js runs
// (scripts/cli-bundle.mjs). The compiler, esbuild and the type packages are devDependencies, so
// an install without them (--omit=dev, or NODE_ENV=production) cannot build: it stops saying how
// to install for production, instead of a page of type errors (npm keeps typescript itself
// there, as an optional peer of @bull-board/api's valibot) and never runs on with a dist/ of
// other sources. Last, it links node_modules/.bin/giftjobs to bin/giftjobs.js, which npm does for a
// dependency's bin but not for the project's own: with node_modules/.bin on the PATH, `giftjobs`
// runs without npx's 1-3 s a command (README, "Walk-through").
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { devDependencies } = JSON.parse(readFileSync("package.json", "utf8"));
const needed = Object.keys(devDependencies).filter(
  (name) => name === "typescript" || name === "esbuild" || name.startsWith("@types/"),
);
const missing = needed.filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.error(
    `giftjobs: dist/ is built with devDependencies this install left out (${missing.join(", ")}: ` +
      "--omit=dev or NODE_ENV=production). For a production install run `npm ci` (it builds " +
      'dist/), then `npm prune --omit=dev`: docs/operations.md, "Running in production".',
  );
  process.exit(1);
}
const tsc = require.resolve("typescript/bin/tsc");
const compile = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { stdio: "inherit" });
if (compile.status !== 0) process.exit(compile.status ?? 1);
const bundler = fileURLToPath(new URL("cli-bundle.mjs", import.meta.url));
const bundle = spawnSync(process.execPath, [bundler], { stdio: "inherit" });
if (bundle.status !== 0) process.exit(bundle.status ?? 1);
linkBin();

/** node_modules/.bin/giftjobs -> ../../bin/giftjobs.js, replacing what was there. */
function linkBin() {
  const link = "node_modules/.bin/giftjobs";
  try {
    mkdirSync("node_modules/.bin", { recursive: true });
    rmSync(link, { force: true });
    symlinkSync("../../bin/giftjobs.js", link);
  } catch (error) {
    // A file system without symlinks: npx giftjobs still runs it.
    console.error(`giftjobs: could not link ${link} (${error.message}); use npx giftjobs`);
  }
}
