// The suite's per-file durations, kept in test/timings.json so that a fresh clone (CI, where vitest
// has no cache of earlier runs) still starts the slowest files first. The file is written by a run
// (test/helpers/timings-reporter.ts, `GIFTJOBS_WRITE_TIMINGS=1 npm test`), never by hand.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Relative path of a test file -> seconds it took in the run that wrote the file. */
export type Timings = Record<string, number>;

export const TIMINGS_PATH = "test/timings.json";

/** Files quicker than this are left out: their order does not change when the run ends. */
const SHORTEST_KEPT_S = 1;

export function readTimings(root: string): Timings {
  const path = join(root, TIMINGS_PATH);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Timings) : {};
}

/**
 * The timings after a run: the files that ran take their new durations (ms, rounded to whole
 * seconds), the others keep theirs while they exist; the slowest first.
 */
export function mergeTimings(
  previous: Timings,
  ran: ReadonlyArray<{ file: string; durationMs: number }>,
  exists: (file: string) => boolean,
): Timings {
  const merged = new Map(Object.entries(previous).filter(([file]) => exists(file)));
  for (const { file, durationMs } of ran) merged.set(file, Math.round(durationMs / 1000));
  const kept = [...merged].filter(([, seconds]) => seconds >= SHORTEST_KEPT_S);
  kept.sort(([fileA, a], [fileB, b]) => b - a || fileA.localeCompare(fileB));
  return Object.fromEntries(kept);
}

export function writeTimings(root: string, timings: Timings): void {
  writeFileSync(join(root, TIMINGS_PATH), `${JSON.stringify(timings, null, 2)}\n`);
}
