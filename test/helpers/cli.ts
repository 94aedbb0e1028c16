import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("./cli-entry.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// By path, not by name: a child running in a temporary folder cannot resolve "tsx" from there.
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
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
  user: { uid?: number; gid?: number } = {},
): CliChild {
  const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], {
    cwd,
    env: { ...process.env, ...env, CI: "true" },
    stdio: ["ignore", "pipe", "pipe"],
    ...user,
  });
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
  user: { uid?: number; gid?: number } = {},
): Promise<CliRun> {
  return finished(spawnCli(args, env, cwd, user));
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
