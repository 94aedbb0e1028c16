// The definitions of `giftjobs demo`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";

const runDemo = lazyActions(() => import("../commands/demo.js"));

/** Registers `demo`. */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("Run the whole product end to end on the embedded sandbox (no account needed).")
    .option("--rows <n>", "rows in the sample campaign", (v) => Number.parseInt(v, 10), 200)
    .option("--json", "print one JSON document")
    .action(runDemo("runDemoCommand"));
}
