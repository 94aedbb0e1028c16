// vitest sequencer: the slowest files start first, so that neither worker ends the run alone on one
// of them. A file's duration is vitest's own, from its cache of the last run on this machine, or,
// in a fresh clone without that cache (CI), from test/timings.json, written by a run
// (test/helpers/timings.ts). Files with neither follow, the largest first, as vitest orders them.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { readTimings, type Timings } from "./timings.js";

/** Seconds a file took, vitest's cache first; undefined when neither knows it. */
type DurationOf = (spec: TestSpecification) => number | undefined;

/** Slowest first; the files without a duration keep the order `sorted` gave them, after the rest. */
export function slowestFirst<T>(
  sorted: readonly T[],
  durationOf: (item: T) => number | undefined,
): T[] {
  const known = sorted.filter((item) => durationOf(item) !== undefined);
  const unknown = sorted.filter((item) => durationOf(item) === undefined);
  known.sort((a, b) => (durationOf(b) as number) - (durationOf(a) as number));
  return [...known, ...unknown];
}

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const committed: Timings = readTimings(root);
    const durationOf: DurationOf = (spec) => {
      const file = relative(root, spec.moduleId).replaceAll("\\", "/");
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      // vitest's own rule, kept: a file that failed last time runs first.
      if (cached?.failed) return Number.POSITIVE_INFINITY;
      return cached ? cached.duration / 1000 : committed[file];
    };
    return slowestFirst(await super.sort(files), durationOf);
  }
}
