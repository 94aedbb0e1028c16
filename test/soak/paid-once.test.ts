// Issue 31, "Paid once, whatever the service answers": a fixed set of seeds of the soak plan
// (scenario.ts), each run against its own sandbox, Redis prefix and workers, then checked at
// rest against the sandbox's own orders (check.ts). `npm run soak` runs any number of seeds.
import { describe, expect, it } from "vitest";
import { failureText } from "./report.js";
import { scenarioOf } from "./scenario.js";
import { runScenario } from "./soak-run.js";

/** About two minutes on two shared cores; a seed with a killed child worker takes 3 to 5 s. */
const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);

describe("paid once, whatever the service answers (soak seeds)", () => {
  for (const seed of SEEDS)
    it(`seed ${seed}`, async () => {
      const result = await runScenario(scenarioOf(seed));
      // The whole report, so a failing seed says what happened without a rerun.
      expect(result.violations, failureText(result)).toEqual([]);
    }, 60_000);
});
