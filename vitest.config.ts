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
    // Two cores: integration suites start servers and workers; keep the file-level parallelism modest.
    maxWorkers: 2,
    // The slowest files first, by vitest's timings (test/helpers/slowest-first.ts).
    sequence: { sequencer: SlowestFirstSequencer },
    // With GIFTJOBS_WRITE_TIMINGS=1 the run writes its timings into test/timings.json.
    reporters: ["default", new TimingsReporter()],
  },
});
