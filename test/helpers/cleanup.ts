// What tests leave behind (Redis keys under a prefix, temporary folders) is removed by setup.ts:
// what a test makes (in its beforeEach hooks or its body) after that test, what a file makes
// outside any test (at collection time, in beforeAll) after the file. Outside vitest (benches)
// nothing runs these; the benches clean up themselves. Tests of a file may run concurrently
// (it.concurrent, test/soak/paid-once.test.ts): what they make is removed once none is running,
// so one test's end never removes what another still uses.

type Cleanup = () => Promise<void>;

/** Tests of this file running now (more than one under it.concurrent). */
let running = 0;
const afterTest: Cleanup[] = [];
const afterFile: Cleanup[] = [];

/** Runs `cleanup` once the current test ends, or once the file ends when no test is running. */
export function cleanUpLater(cleanup: Cleanup): void {
  (running > 0 ? afterTest : afterFile).push(cleanup);
}

/** setup.ts: a test starts. */
export function testStarts(): void {
  running += 1;
}

/**
 * setup.ts: a test has ended (its own afterEach hooks have run); once no other test of the file
 * runs, remove what the tests made.
 */
export async function testEnded(): Promise<void> {
  running -= 1;
  if (running === 0) await runAll(afterTest);
}

/** setup.ts: the file has ended; remove what it made outside its tests. */
export async function fileEnded(): Promise<void> {
  await runAll(afterFile);
}

async function runAll(cleanups: Cleanup[]): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0)) {
    try {
      await cleanup();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, "test clean-up failed");
}
