import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { cleanUpLater } from "./cleanup.js";
import { COMPILED_CLI } from "./cli-build.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Who runs the child, and from which copy of the project: a user other than this process's may
 * need one it can read (projectReadableBy, test/helpers/readable-project.ts).
 */
export interface RunAs {
  uid?: number;
  gid?: number;
  /** The project whose sources and node_modules the child runs; default this checkout. */
  root?: string;
}

/** A running `giftjobs` child; what it printed so far is kept for the test to read. */
export type CliChild = ChildProcess & {
  /** stdout and stderr, interleaved as they came. */
  output: () => string;
  /** stdout and stderr apart. */
  printed: () => { stdout: string; stderr: string };
};

/**
 * Starts `giftjobs ARGS` as a real child process, from the TypeScript sources: exit codes and
 * stdout are the program's own, and process.exitCode or a stray write in one run cannot leak into
 * the test runner or the next run. `env` is added to this process's environment.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  cwd = ROOT,
  as: RunAs = {},
): CliChild {
  const { root = ROOT, ...user } = as;
  const child = spawn(process.execPath, [...entryArgs(root), ...args], {
    cwd,
    env: { ...process.env, ...env, CI: "true" },
    stdio: ["ignore", "pipe", "pipe"],
    ...user,
  });
  // A child still running when its test ends (the test timed out, or failed before it stopped
  // it) is stopped then: once a `demo` left so ran on for an hour beside the later files.
  cleanUpLater(() => stopLeftRunning(child));
  let output = "";
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    output += d;
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
    stderr += d;
  });
  return Object.assign(child, { output: () => output, printed: () => ({ stdout, stderr }) });
}

/** The command line that runs `giftjobs` as spawnCli does: node and its arguments. */
export function cliCommandLine(root = ROOT): string[] {
  return [process.execPath, ...entryArgs(root)];
}

/**
 * How a child runs the CLI: compiled by the run's globalSetup (test/helpers/cli-build.ts) when
 * it is this checkout's, else from another copy's sources under tsx. By path, not by name: a
 * child running in a temporary folder cannot resolve "tsx" from there.
 */
function entryArgs(root: string): string[] {
  if (root === ROOT && existsSync(COMPILED_CLI)) return [COMPILED_CLI];
  const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;
  return ["--import", tsx, join(root, "test", "helpers", "cli-entry.ts")];
}

/** Waits until `child` has ended and its output is all read: exit code, stdout and stderr. */
export function finished(child: CliChild): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, ...child.printed() }));
  });
}

/** Runs `giftjobs ARGS` to the end: exit code, stdout and stderr. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  cwd = ROOT,
  as: RunAs = {},
): Promise<CliRun> {
  return finished(spawnCli(args, env, cwd, as));
}

/** SIGTERM, as an operator stops it; SIGKILL after 10 s. Nothing when it has ended. */
async function stopLeftRunning(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const ended = exited(child);
  child.kill("SIGTERM");
  const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await ended;
  clearTimeout(killed);
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
