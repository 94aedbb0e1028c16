// vitest reporter: with GIFTJOBS_WRITE_TIMINGS=1, writes each file's duration of this run into
// test/timings.json (test/helpers/timings.ts), which the sequencer reads in a fresh clone.
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { mergeTimings, readTimings, writeTimings } from "./timings.js";

export default class TimingsReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (process.env.GIFTJOBS_WRITE_TIMINGS !== "1") return;
    const ran = testModules
      .filter((module) => module.state() === "passed")
      .map((module) => ({
        file: relative(this.root, module.moduleId).replaceAll("\\", "/"),
        durationMs: module.diagnostic().duration,
      }));
    const timings = mergeTimings(readTimings(this.root), ran, (file) =>
      existsSync(join(this.root, file)),
    );
    writeTimings(this.root, timings);
  }
}
