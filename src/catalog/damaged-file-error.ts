import { readFile } from "node:fs/promises";
import { RunError } from "../errors/run-error.js";

/**
 * A file giftjobs wrote that cannot be read back as written (cut short, edited by hand, a bad
 * disk): the message names the file, the line when there is one, and what is wrong.
 */
export class DamagedFileError extends RunError {
  override readonly name = "DamagedFileError";
  constructor(
    readonly path: string,
    readonly line: number | undefined,
    readonly problem: string,
  ) {
    super(`${path}${line === undefined ? "" : ` line ${line}`}: ${problem}`);
  }
}

/** JSON.parse whose failure is a DamagedFileError naming `path` and `line`. */
export function parseFileJson<T>(text: string, path: string, line?: number): T {
  return atLine(path, line, () => JSON.parse(text) as T);
}

/** A JSON file giftjobs wrote, or undefined when there is none; see parseFileJson. */
export async function readFileJson<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return parseFileJson<T>(text, path);
}

/** Runs `read` on line `line` of `path`; a failure becomes a DamagedFileError naming them. */
export function atLine<T>(path: string, line: number | undefined, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof DamagedFileError) throw error;
    const what = error instanceof SyntaxError ? "not valid JSON" : "not as written";
    throw new DamagedFileError(path, line, `${what} (${(error as Error).message})`);
  }
}
