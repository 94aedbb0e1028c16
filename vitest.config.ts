import { defineConfig } from "vitest/config";
import { SHARED_WORKER_FILES } from "./test/helpers/shared-worker-files.js";
import SlowestFirstSequencer from "./test/helpers/slowest-first.js";
import TimingsReporter from "./test/helpers/timings-reporter.js";

const ALL = ["test/**/*.test.ts"];
const NEVER = ["test/bench/**", "node_modules/**"];

export default defineConfig({
  test: {
    exclude: NEVER,
    // Deletes each test's Redis prefixes and temporary folders after it (test/helpers/setup.ts).
    setupFiles: ["test/helpers/setup.ts"],
    // The CLI the tests spawn, compiled once per run (test/helpers/cli-build.ts).
    globalSetup: ["test/helpers/cli-build.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Three files at once on two cores: a file waits on Redis, spawned commands and servers much
    // of its time. On this project's 2-core machine the whole run took 632 s with 2, 555 s with 3
    // and 561 s with 4 (one run each, 2026-11-29): past 3 the files only wait on each other.
    maxWorkers: 3,
    // The slowest files first, by vitest's timings (test/helpers/slowest-first.ts).
    sequence: { sequencer: SlowestFirstSequencer },
    // With GIFTJOBS_WRITE_TIMINGS=1 the run writes its timings into test/timings.json.
    reporters: ["default", new TimingsReporter()],
    projects: [
      // Small files that leave nothing behind, in shared workers (test/helpers/shared-worker-files.ts).
      {
        extends: true,
        test: { name: "shared", include: [...SHARED_WORKER_FILES], isolate: false },
      },
      {
        extends: true,
        test: { name: "isolated", include: ALL, exclude: [...NEVER, ...SHARED_WORKER_FILES] },
      },
    ],
  },
});
