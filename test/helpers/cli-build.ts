// vitest globalSetup: the CLI the tests spawn (test/helpers/cli.ts), bundled once per run by
// esbuild from the sources as they are now, as the shipped one is (scripts/cli-bundle.mjs), so
// that each of the suite's hundreds of `giftjobs` children starts as the shipped one does rather
// than transpiling every module it loads under tsx (about 0.35 s a child). GIFTJOBS_TEST_CLI=tsx
// runs the children under tsx instead.
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleCli } from "../../scripts/cli-bundle.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Where the compiled CLI goes: inside node_modules, so the npm packages it leaves external
 * resolve, and the folders above it lead to package.json (src/package-root.ts). Named after the
 * checkout: worktrees that share one node_modules (a link to it) do not build over each other's.
 */
export const COMPILED_CLI_DIR = join(
  ROOT,
  "node_modules",
  ".cache",
  `giftjobs-test-cli-${createHash("sha256").update(ROOT).digest("hex").slice(0, 12)}`,
);
export const COMPILED_CLI = join(COMPILED_CLI_DIR, "cli-entry.mjs");

export default async function setup(): Promise<void> {
  await rm(COMPILED_CLI_DIR, { recursive: true, force: true });
  if (process.env.GIFTJOBS_TEST_CLI === "tsx") return;
  await bundleCli({
    name: "cli-entry",
    entry: join(ROOT, "test", "helpers", "cli-entry.ts"),
    outdir: COMPILED_CLI_DIR,
    outExtension: ".mjs",
  });
}
