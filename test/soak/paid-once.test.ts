// Issue 31, "Paid once, whatever the service answers": a fixed set of seeds of the soak plan
// (scenario.ts), each run against its own sandbox, Redis prefix and workers, then checked at
// rest against the sandbox's own orders (check.ts). `npm run soak` runs any number of seeds.
import { describe, it } from "vitest";
import { failureText } from "./report.js";
import { scenarioOf } from "./scenario.js";
import { runScenario } from "./soak-run.js";

/**
 * Seeds 1 to GIFTJOBS_SOAK_SEEDS (default 32), 3 to 13 s a seed (a killed or frozen child
 * worker, a lost ledger take longest), mostly spent waiting on the sandbox's latencies and the
 * workers' polls: the seeds run side by side (each its own sandbox, prefix, data dir and workers;
 * vitest's maxConcurrency at a time), about 40 s in all instead of 150 s one after another.
 * `npm run soak -- --seeds 300` goes further.
 */
const SEED_COUNT = seedCount(process.env.GIFTJOBS_SOAK_SEEDS);
const SEEDS = Array.from({ length: SEED_COUNT }, (_, i) => i + 1);

function seedCount(text: string | undefined): number {
  if (text === undefined || text === "") return 32;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`GIFTJOBS_SOAK_SEEDS must be a whole number from 1, not "${text}"`);
  return n;
}

describe.concurrent("paid once, whatever the service answers (soak seeds)", () => {
  // The test's own expect: under describe.concurrent a failure names its own seed.
  for (const seed of SEEDS)
    it(`seed ${seed}`, async ({ expect }) => {
      const result = await runScenario(scenarioOf(seed));
      // The whole report, so a failing seed says what happened without a rerun.
      expect(result.violations, failureText(result)).toEqual([]);
    }, 60_000);
});
