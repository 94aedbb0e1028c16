import type { PaidPruned } from "../orders/paid-memory.js";
import { plural } from "../plural.js";
import type { Stores } from "../stores/stores.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

const DAY_MS = 86_400_000;

/**
 * How much the paid memory keeps past GIFTJOBS_REPEAT_WINDOW_DAYS, which the nightly job prunes
 * (docs/architecture/repeats.md, "How long it is kept"). Some past it is the day's: the job runs
 * at 03:30 UTC. Some past it by more than a day: failed, the job is not running.
 */
export async function paidMemoryCheck(
  opening: Promise<Stores>,
  repeatWindowDays: number,
  now = Date.now(),
): Promise<DoctorCheck> {
  try {
    const memory = (await opening).paidMemory;
    const before = now - repeatWindowDays * DAY_MS;
    const [past, overdue] = await Promise.all([
      memory.countBefore(before),
      memory.countBefore(before - DAY_MS),
    ]);
    return paidMemoryOf(repeatWindowDays, past, overdue);
  } catch (error) {
    return failed("paid-memory", `not checked: ${(error as Error).message}`);
  }
}

function paidMemoryOf(days: number, past: PaidPruned, overdue: PaidPruned): DoctorCheck {
  const setting = `GIFTJOBS_REPEAT_WINDOW_DAYS=${days}`;
  if (past.entries + past.imports === 0)
    return passed(
      "paid-memory",
      `nothing recorded more than ${days} days ago is kept (${setting})`,
    );
  const kept = `${counted(past)} recorded more than ${days} days ago ${past.entries + past.imports === 1 ? "is" : "are"} kept`;
  const late = overdue.entries + overdue.imports;
  if (late === 0)
    return passed(
      "paid-memory",
      `${kept}, none for over a day: the worker's nightly job prunes them (${setting})`,
    );
  return failed(
    "paid-memory",
    `${kept}, ${counted(overdue)} for over a day: is the nightly job running? (a worker serving the maintenance queue) (${setting})`,
  );
}

function counted({ entries, imports }: PaidPruned): string {
  return `${entries} ${plural(entries, "entry", "entries")} and ${imports} imported ${plural(imports, "file")}`;
}
