// The definitions of `giftjobs audit`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import { type Command, InvalidArgumentError, Option } from "commander";
import { lazyActions } from "../lazy-action.js";

const runAudit = lazyActions(() => import("../commands/audit.js"));

/** `--since T`: a date or a time (ISO 8601); a date alone is its start, UTC. */
function sinceTime(value: string): Date {
  const time = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
    ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
    : Number.NaN;
  if (Number.isNaN(time))
    throw new InvalidArgumentError("not a date or time (e.g. 2024-05-01 or 2024-05-01T09:00:00Z)");
  return new Date(time);
}

/** Registers `audit` and `audit verify`: the audit trail (docs/architecture/audit.md). */
export function registerAudit(program: Command): void {
  const audit = program
    .command("audit")
    .description(
      "Show the audit trail: who imported, approved, paused, resumed, cancelled, retried, archived what, and when.",
    )
    .option("--campaign <name>", "only this campaign's entries")
    .option(
      "--since <time>",
      "only entries at or after this date or time (UTC unless it says)",
      sinceTime,
    )
    .option("--actor <name>", "only this actor's entries")
    .addOption(new Option("--json", "print a JSON array of the entries").conflicts("csv"))
    .option("--csv", "print the entries as CSV (cells a spreadsheet would run are neutralised)")
    .option(
      "--no-verify",
      "list the entries as stored, without checking the chain (forensics on a broken trail)",
    )
    .action(runAudit("runAudit"));
  audit
    .command("verify")
    .description(
      "Check the audit trail's hash chain, and that every campaign has its import entry: exit 1 naming the first break.",
    )
    .option("--json", "print one JSON document")
    .action(runAudit("runVerify"));
}
