import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SHARED_WORKER_FILES } from "../helpers/shared-worker-files.js";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * What a file run in a shared worker must not do, by the words that do it: start a process or a
 * server (the sandbox, a campaign's environment, a Redis of its own), set the environment, or
 * mock. Each would be left for the next file in the worker to find.
 */
const NOT_SHARED =
  /spawnCli|runCli|spawn\(|execFile|process\.env|startRedisServer|startSandbox|campaignEnv|createServer|listen\(|new Redis\(|vi\.mock|vi\.doMock|vi\.stub|vi\.spyOn/;

describe("the files run in shared workers (test/helpers/shared-worker-files.ts)", () => {
  it.each(SHARED_WORKER_FILES)("%s exists and starts, sets and mocks nothing", (file) => {
    const path = join(ROOT, file);
    expect(existsSync(path), file).toBe(true);
    expect(readFileSync(path, "utf8").match(NOT_SHARED)?.[0], file).toBeUndefined();
  });

  it("lists each file once, in order", () => {
    expect([...SHARED_WORKER_FILES]).toEqual([...new Set(SHARED_WORKER_FILES)].sort());
  });

  it("the rule finds what it is for", () => {
    expect("await runCli([])").toMatch(NOT_SHARED);
    expect('process.env.GIFTJOBS_X = "1"').toMatch(NOT_SHARED);
    expect("const r = new Redis(url)").toMatch(NOT_SHARED);
  });
});
