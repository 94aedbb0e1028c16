// vitest globalSetup: the CLI the tests spawn (test/helpers/cli.ts), compiled once per run with
// esbuild from the sources as they are now, so that each of the suite's hundreds of `giftjobs`
// children starts as the shipped one does rather than transpiling every module it loads under tsx
// (about 0.35 s a child). GIFTJOBS_TEST_CLI=tsx runs the children under tsx instead.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Where the compiled CLI goes: inside node_modules, so the npm packages it leaves external
 * resolve, and the folders above it lead to package.json (src/package-root.ts).
 */
export const COMPILED_CLI_DIR = join(ROOT, "node_modules", ".cache", "giftjobs-test-cli");
export const COMPILED_CLI = join(COMPILED_CLI_DIR, "cli-entry.mjs");

export default async function setup(): Promise<void> {
  await rm(COMPILED_CLI_DIR, { recursive: true, force: true });
  if (process.env.GIFTJOBS_TEST_CLI === "tsx") return;
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: { "cli-entry": join(ROOT, "test", "helpers", "cli-entry.ts") },
    outdir: COMPILED_CLI_DIR,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    // Each command's import() stays a chunk of its own: a child loads what its command uses.
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
}
