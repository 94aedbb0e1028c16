// `npm run soak -- --seeds N [--from S]` runs seeds S..S+N-1 (N defaults to 32,
// twice the seeds `npm test` runs; S defaults to 1);
// `npm run soak -- --seed S [--seed T ...]` replays given seeds; `--verbose` prints every trace.
// Prints each failing seed with its events and trace; exit 1 when any seed fails.
// (Issue 31; the plan is scenario.ts, the invariants check.ts.)
import { parseArgs } from "node:util";
import { coverageText, failureText, passText, summaryLines } from "./report.js";
import { scenarioOf } from "./scenario.js";
import { runScenario, type SoakResult } from "./soak-run.js";

function seedsToRun(): { seeds: number[]; verbose: boolean } {
  const { values } = parseArgs({
    options: {
      seeds: { type: "string" },
      from: { type: "string" },
      seed: { type: "string", multiple: true },
      verbose: { type: "boolean", default: false },
    },
  });
  const whole = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
    return n;
  };
  if (values.seed?.length)
    return { seeds: values.seed.map((s) => whole("seed", s)), verbose: values.verbose };
  const count = whole("seeds", values.seeds ?? "32");
  const from = whole("from", values.from ?? "1");
  return { seeds: Array.from({ length: count }, (_, i) => from + i), verbose: values.verbose };
}

async function main(): Promise<number> {
  const { seeds, verbose } = seedsToRun();
  const started = Date.now();
  const failed: SoakResult[] = [];
  const all: SoakResult[] = [];
  for (const seed of seeds) {
    const result = await runScenario(scenarioOf(seed));
    all.push(result);
    if (result.violations.length > 0) failed.push(result);
    if (result.violations.length > 0 || verbose) console.log(failureText(result));
    else console.log(passText(result));
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\n${coverageText(all)}`);
  console.log(`\n${seeds.length} seeds in ${seconds} s: ${failed.length} failed`);
  for (const result of failed) for (const line of summaryLines(result)) console.log(`  ${line}`);
  if (failed.length > 0)
    console.log(`failing seeds: ${failed.map((result) => result.scenario.seed).join(" ")}`);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
