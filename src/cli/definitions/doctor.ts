// The definitions of `giftjobs doctor`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { positiveWhole } from "../option-parsers.js";

const runDoctor = lazyActions(() => import("../commands/doctor.js"));

/** Registers `doctor`. */
export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "Check what production needs: Redis (every cluster node), noeviction, appendonly, memory, the service's URL and key, PostgreSQL when configured, the snapshot's age. Exit 0 when all hold.",
    )
    .option(
      "--max-snapshot-age <hours>",
      "a current catalog snapshot older than this fails",
      positiveWhole,
      26,
    )
    .option("--json", "print the checks as one JSON document")
    .action(runDoctor("runDoctorCommand"));
}
