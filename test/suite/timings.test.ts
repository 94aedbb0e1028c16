import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TestModule, Vitest } from "vitest/node";
import { slowestFirst } from "../helpers/slowest-first.js";
import { mergeTimings, TIMINGS_PATH } from "../helpers/timings.js";
import TimingsReporter from "../helpers/timings-reporter.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const everyFile = () => true;

describe("mergeTimings", () => {
  it("takes the new durations in whole seconds and lists the slowest first", () => {
    const merged = mergeTimings(
      { "test/a.test.ts": 3, "test/b.test.ts": 9 },
      [{ file: "test/a.test.ts", durationMs: 20_400 }],
      everyFile,
    );
    expect(Object.entries(merged)).toEqual([
      ["test/a.test.ts", 20],
      ["test/b.test.ts", 9],
    ]);
  });

  it("drops the files that no longer exist and those under a second", () => {
    const merged = mergeTimings(
      { "test/gone.test.ts": 30, "test/kept.test.ts": 5 },
      [{ file: "test/quick.test.ts", durationMs: 400 }],
      (file) => file !== "test/gone.test.ts",
    );
    expect(merged).toEqual({ "test/kept.test.ts": 5 });
  });
});

describe("slowestFirst", () => {
  it("puts the files with a duration first, longest first, the others after in their order", () => {
    const seconds: Record<string, number | undefined> = { slow: 50, mid: 10, fast: 1 };
    const order = slowestFirst(["big", "fast", "slow", "small", "mid"], (file) => seconds[file]);
    expect(order).toEqual(["slow", "mid", "fast", "big", "small"]);
  });
});

describe("the timings reporter", () => {
  afterEach(() => {
    delete process.env.GIFTJOBS_WRITE_TIMINGS;
  });

  /** A run of one passed file that took `durationMs`, reported in the project at `root`. */
  async function reportRun(root: string, durationMs: number): Promise<void> {
    await mkdir(join(root, "test"), { recursive: true });
    await writeFile(join(root, "test/x.test.ts"), "");
    const reporter = new TimingsReporter();
    reporter.onInit({ config: { root } } as Vitest);
    const module = {
      moduleId: join(root, "test/x.test.ts"),
      state: () => "passed",
      diagnostic: () => ({ duration: durationMs }),
    };
    reporter.onTestRunEnd([module as unknown as TestModule]);
  }

  it("writes the run's durations into test/timings.json when asked", async () => {
    const root = await tmpDir("timings");
    process.env.GIFTJOBS_WRITE_TIMINGS = "1";
    await reportRun(root, 12_000);
    const written = JSON.parse(await readFile(join(root, TIMINGS_PATH), "utf8"));
    expect(written).toEqual({ "test/x.test.ts": 12 });
  });

  it("writes nothing on an ordinary run", async () => {
    const root = await tmpDir("timings");
    await reportRun(root, 12_000);
    await expect(readFile(join(root, TIMINGS_PATH), "utf8")).rejects.toThrow(/ENOENT/);
  });
});
