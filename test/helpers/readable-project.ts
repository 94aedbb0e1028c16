import { spawnSync } from "node:child_process";
import {
  chmod,
  copyFile,
  link,
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  realpath,
  symlink,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanUpLater } from "./cleanup.js";
import { removeDir } from "./tmp-dir.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What a CLI child run from the sources reads (test/helpers/cli.ts), node_modules apart. */
const NEEDED = [
  "package.json",
  "tsconfig.json",
  "config",
  "src",
  "jobs",
  "test/helpers/cli-entry.ts",
];

export interface User {
  uid: number;
  gid: number;
}

/** Whether `user` may run node and read each of `paths` (asked of a child run as that user). */
function readableBy(user: User, paths: string[]): boolean {
  const check = "for (const p of process.argv.slice(1)) require('node:fs').accessSync(p, 4)";
  const run = spawnSync(process.execPath, ["-e", check, ...paths], {
    ...user,
    cwd: "/",
    stdio: "ignore",
  });
  return run.status === 0;
}

/**
 * The project as `user` can read it, to run the CLI from as that user (test/helpers/cli.ts,
 * `root`): this checkout when it can, else a copy of what the CLI reads in a new world-readable
 * temporary folder, removed once the test (or the file) ends. A checkout in a folder only its
 * owner may enter (a `mktemp -d` one) is such a case; its node_modules comes along too, unless
 * the user can read it where it is. Files are hard-linked where the file system allows (nothing
 * is written to them), copied otherwise. Undefined when the user cannot run node or read the
 * temporary folder: then nothing can be run as that user.
 */
export async function projectReadableBy(user: User): Promise<string | undefined> {
  const tsx = join(ROOT, "node_modules", "tsx", "dist", "loader.mjs");
  if (readableBy(user, [join(ROOT, "package.json"), join(ROOT, "src", "cli", "main.ts"), tsx]))
    return ROOT;
  if (!readableBy(user, [tmpdir()])) return undefined;
  const copy = await mkdtemp(join(tmpdir(), "gj-project-"));
  cleanUpLater(() => removeDir(copy));
  await chmod(copy, 0o755);
  for (const path of NEEDED) await linkTree(join(ROOT, path), join(copy, path));
  const modules = await realpath(join(ROOT, "node_modules"));
  if (readableBy(user, [join(modules, "tsx", "dist", "loader.mjs")]))
    await symlink(modules, join(copy, "node_modules"));
  else await linkTree(modules, join(copy, "node_modules"));
  return readableBy(user, [join(copy, "package.json"), join(copy, "node_modules", "tsx")])
    ? copy
    : undefined;
}

/** `from` at `to`: folders made (mode 755), files hard-linked or copied, symbolic links kept. */
async function linkTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch((error) => {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw error;
  });
  if (!entries) return linkFile(from, to);
  await mkdir(to, { recursive: true, mode: 0o755 });
  await Promise.all(
    entries.map(async (entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) await linkTree(source, target);
      else if (entry.isSymbolicLink()) await symlink(await readlink(source), target);
      else await linkFile(source, target);
    }),
  );
}

async function linkFile(from: string, to: string): Promise<void> {
  await mkdir(join(to, ".."), { recursive: true, mode: 0o755 });
  await link(from, to).catch(async (error) => {
    // Another file system, or one without hard links: a copy.
    if (!["EXDEV", "EPERM", "ENOTSUP"].includes((error as NodeJS.ErrnoException).code ?? ""))
      throw error;
    await copyFile(from, to);
  });
}
