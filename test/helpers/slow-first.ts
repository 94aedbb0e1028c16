// vitest sequencer: the files known to take longest start first. Without vitest's cache (a fresh
// clone, as in CI) vitest orders files by size, and the soak, a small file that runs for about
// two minutes, started among the last: the other worker then sat idle for most of it. Measured
// times: the table of the ten slowest files in docs/development.md.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first, as docs/development.md lists them. */
export const SLOW_FILES = [
  "test/soak/paid-once.test.ts",
  "test/worker/redis-outage.test.ts",
  "test/cluster/cluster.test.ts",
  "test/readme.test.ts",
  "test/campaigns/side-by-side.test.ts",
  "test/import/cli.test.ts",
  "test/worker/exactly-once.test.ts",
  "test/import/large-file.test.ts",
  "test/jobs/orders/outcomes.test.ts",
  "test/worker/service-outage.test.ts",
];

/** Place of a file in SLOW_FILES, or the list's length for any other file. */
export function slowRank(moduleId: string): number {
  const slash = moduleId.replaceAll("\\", "/");
  const rank = SLOW_FILES.findIndex((file) => slash.endsWith(`/${file}`));
  return rank === -1 ? SLOW_FILES.length : rank;
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return sorted.sort((a, b) => slowRank(a.moduleId) - slowRank(b.moduleId));
  }
}
