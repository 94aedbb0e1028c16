import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { positiveWhole } from "../option-parsers.js";

const run = lazyActions(() => import("../commands/doctor.js"));

/** Registers `doctor`. */
export function register(program: Command): void {
  program
    .command("doctor")
    .description(
      "Check what production needs: Redis (every cluster node), noeviction, appendonly, memory, the service's URL and key, the snapshot's age. Exit 0 when all hold.",
    )
    .option(
      "--max-snapshot-age <hours>",
      "a current catalog snapshot older than this fails",
      positiveWhole,
      26,
    )
    .option("--json", "print the checks as one JSON document")
    .action(run("runDoctorCommand"));
}
