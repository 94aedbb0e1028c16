import { runDoctor } from "../../doctor/run-doctor.js";
import { createContext, printJson } from "../run-action.js";

/** `doctor`: each check in a line (or --json); exit 0 when all hold. */
export async function runDoctorCommand(opts: {
  maxSnapshotAge: number;
  json?: boolean;
}): Promise<number> {
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
}
