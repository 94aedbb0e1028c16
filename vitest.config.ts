import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: integration suites start servers and workers; keep the file-level parallelism modest.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
