import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";

const run = lazyActions(() => import("../commands/demo.js"));

/** Registers `demo`. */
export function register(program: Command): void {
  program
    .command("demo")
    .description("Run the whole product end to end on the embedded sandbox (no account needed).")
    .option("--rows <n>", "rows in the sample campaign", (v) => Number.parseInt(v, 10), 200)
    .option("--json", "print one JSON document")
    .action(run("runDemoCommand"));
}
