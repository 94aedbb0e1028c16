// What tests leave behind (Redis keys under a prefix, temporary folders) is removed by setup.ts:
// what a test makes (in its beforeEach hooks or its body) after that test, what a file makes
// outside any test (at collection time, in beforeAll) after the file. Outside vitest (benches)
// nothing runs these; the benches clean up themselves.

type Cleanup = () => Promise<void>;

let inTest = false;
const afterTest: Cleanup[] = [];
const afterFile: Cleanup[] = [];

/** Runs `cleanup` once the current test ends, or once the file ends when no test is running. */
export function cleanUpLater(cleanup: Cleanup): void {
  (inTest ? afterTest : afterFile).push(cleanup);
}

/** setup.ts: a test starts. */
export function testStarts(): void {
  inTest = true;
}

/** setup.ts: the test has ended (its own afterEach hooks have run); remove what it made. */
export async function testEnded(): Promise<void> {
  inTest = false;
  await runAll(afterTest);
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
