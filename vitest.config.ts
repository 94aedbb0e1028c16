import { defineConfig } from "vitest/config";
import SlowestFirstSequencer from "./test/helpers/slowest-first.js";
import TimingsReporter from "./test/helpers/timings-reporter.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
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
  },
});
