import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("./cli-entry.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// By path, not by name: a child running in a temporary folder cannot resolve "tsx" from there.
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

/** Starts `giftjobs ARGS` as a real child process; output is collected for diagnosis. */
export function spawnCli(
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], {
    cwd,
    env: { ...process.env, ...env, CI: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  return Object.assign(child, { output: () => output });
}

/** Runs `giftjobs ARGS` to the end: exit code, stdout and stderr. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], {
      cwd,
      env: { ...process.env, ...env, CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
