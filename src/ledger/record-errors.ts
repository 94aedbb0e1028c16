import { RunError } from "../errors/run-error.js";
import type { StoredState } from "./types.js";

/** RECORD refused a batch: its new orders would take a currency's planned price over the budget. */
export class BudgetExceededError extends Error {
  override readonly name = "BudgetExceededError";
  constructor(
    readonly currency: string,
    /** Minor units: planned before the batch, the batch's new orders, the budget. */
    readonly planned: bigint,
    readonly batch: bigint,
    readonly budget: bigint,
  ) {
    super(
      `${currency}: planned ${planned} + ${batch} is over the budget of ${budget} (minor units)`,
    );
  }
}

/** RECORD refused a batch: the campaign is cancelled or archived. */
export class CampaignClosedError extends Error {
  override readonly name = "CampaignClosedError";
  constructor(
    readonly campaign: string,
    readonly state: StoredState,
  ) {
    super(`campaign ${campaign} is ${state}: no rows can be added to it`);
  }
}

/**
 * RECORD refused a batch of an import at its fence: the import's batch before it is not recorded
 * there. Either that batch was refused (its own error is the one reported) or Redis no longer
 * holds what this import recorded (a restart without persistence, keys lost).
 */
export class RecordFencedError extends RunError {
  override readonly name = "RecordFencedError";
  constructor(readonly campaign: string) {
    super(
      `campaign ${campaign}: Redis no longer holds the rows this import recorded (restarted or lost its keys?); nothing more was recorded: import the file again to record the rest, each row once`,
    );
  }
}
