// The CLI as esbuild bundles it, in one place for both of its builds: the shipped one (`npm run
// build` and `npm ci`'s prepare run this file: dist/cli/, which bin/giftjobs.js runs) and the one
// the tests spawn (test/helpers/cli-build.ts). Node 20 takes about 0.8 ms to resolve and load each
// ES module, and a command that asks Redis loaded some 240 of them (giftjobs' own, zod's, pino's,
// commander's); bundled, each lazily imported command is one chunk, and what the commands share a
// few more (docs/architecture/command-line.md, "Start-up").
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The npm packages bundled into the chunks: those every command that asks Redis loads (commander
 * at start-up, zod for the configuration, pino for the logger, ioredis), pure JavaScript. Every
 * other dependency stays a package loaded from node_modules when a command needs it: exceljs,
 * BullMQ, pg, express and bull-board are large and loaded by few commands, bull-board serves
 * files from its own folder, pg may load a native module. BullMQ loads no ioredis of its own: it
 * is given giftjobs' connections (src/redis/connection.ts), so a worker holds one copy.
 */
export const BUNDLED_PACKAGES = ["commander", "zod", "pino", "ioredis"];

/**
 * The worker threads' entries, each bundled beside the chunks under its own name, where the
 * module that starts it looks for it (src/import/readers/csv-records-thread.ts).
 */
export const WORKER_ENTRIES = {
  "csv-records-worker": join(ROOT, "src", "import", "readers", "csv-records-worker.ts"),
};

/** The name of the file, in each output folder, that says which sources each chunk holds. */
export const METAFILE = "meta.json";

/** What esbuild leaves out of the bundle: every dependency but BUNDLED_PACKAGES, subpaths too. */
async function externalPackages() {
  const { dependencies } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
  return Object.keys(dependencies)
    .filter((name) => !BUNDLED_PACKAGES.includes(name))
    .flatMap((name) => [name, `${name}/*`]);
}

/**
 * Bundles the CLI from `entry` (a module that runs it, or exports main) into `outdir`, emptied
 * first: `<name>.js` (`outExtension` may change it) with the chunks beside it, and METAFILE.
 */
export async function bundleCli({ name, entry, outdir, outExtension = ".js" }) {
  await rm(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { [name]: entry, ...WORKER_ENTRIES },
    outdir,
    // The metafile's paths relative to the project, wherever the build was started.
    absWorkingDir: ROOT,
    outExtension: { ".js": outExtension },
    bundle: true,
    // Each command's import() stays a chunk of its own: a run loads what its command uses.
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: await externalPackages(),
    // The bundled CommonJS packages (commander, pino) require Node's own modules: an ES module
    // has no `require` of its own.
    banner: {
      js: 'import { createRequire as __giftjobsRequire } from "node:module"; const require = __giftjobsRequire(import.meta.url);',
    },
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
  });
  await writeFile(join(outdir, METAFILE), JSON.stringify(result.metafile));
}

/** The shipped CLI: dist/cli/main.js, which exports main (bin/giftjobs.js runs it). */
export const SHIPPED = {
  name: "main",
  entry: join(ROOT, "src", "cli", "main.ts"),
  outdir: join(ROOT, "dist", "cli"),
};

// Run as `node scripts/cli-bundle.mjs` (npm run build). The file's name is checked too: a bench
// child that esbuild bundles with this module inside (through test/helpers/cli-build.ts) has
// the same import.meta.url as its own entry, and would otherwise build the CLI when it starts.
const runAsScript =
  import.meta.url === pathToFileURL(process.argv[1] ?? "").href &&
  import.meta.url.endsWith("/scripts/cli-bundle.mjs");
if (runAsScript) await bundleCli(SHIPPED);
