import { RunError } from "../errors/run-error.js";
import { UserError } from "../errors/user-error.js";
import type { ImportResult } from "./import-types.js";

/** Thrown when the import is refused (invalid rows in strict mode, budget, balance, conflicts): exit 2. */
export class ImportRefused extends UserError {
  override readonly name = "ImportRefused";
  constructor(
    message: string,
    readonly result: ImportResult,
    /** Refused for its invalid rows: `result.errors` says why. Otherwise the message does. */
    readonly forRows = false,
  ) {
    super(message);
  }
}

/**
 * "1 invalid row (3 problems)": rows counted as rows, their problems told beside when there are
 * more of them (docs/order-files.md, "Every problem of a row").
 */
export function invalidRowsText(rows: number, problems: number): string {
  const counted = `${rows} invalid row${rows === 1 ? "" : "s"}`;
  return problems > rows ? `${counted} (${problems} problems)` : counted;
}

/** The confirm callback answered no: nothing was recorded (exit 1). */
export class ImportDeclined extends RunError {
  override readonly name = "ImportDeclined";
  constructor(readonly result: ImportResult) {
    super(`campaign ${result.campaign}: not confirmed; nothing was recorded`);
  }
}

/** The ledger refused a batch of pass 2 (see RECORD); the batches before it are recorded. */
export class RecordRefused extends Error {
  constructor(
    message: string,
    readonly rows: number,
    readonly orders: number,
  ) {
    super(message);
  }
}
