import type { Command } from "commander";
import { runDoctor } from "../../doctor/run-doctor.js";
import { positiveWhole } from "../option-parsers.js";
import { action, createContext, printJson } from "../run-action.js";

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
    .action(
      action(async (opts: { maxSnapshotAge: number; json?: boolean }) => {
        const ctx = createContext(Boolean(opts.json));
        const report = await runDoctor({
          config: ctx.config,
          maxSnapshotAgeHours: opts.maxSnapshotAge,
        });
        if (ctx.json) printJson(report);
        else {
          const width = Math.max(...report.checks.map((c) => c.name.length));
          for (const check of report.checks) {
            const mark = check.ok ? "ok  " : "FAIL";
            process.stdout.write(`${mark} ${check.name.padEnd(width)}  ${check.detail}\n`);
          }
        }
        return report.ok ? 0 : 1;
      }),
    );
}
