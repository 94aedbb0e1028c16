import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanUpLater } from "./cleanup.js";

/**
 * A new empty folder under the system's temporary folder, named `gj-LABEL-…`. setup.ts removes
 * it after the test that made it (after the file when made outside a test).
 */
export async function tmpDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `gj-${label}-`));
  cleanUpLater(() => removeDir(dir));
  return dir;
}

/** Removes `dir` and all below it; nothing when it is gone already. */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}
