import { RunError } from "../errors/run-error.js";
import { UserError } from "../errors/user-error.js";
import type { Actor } from "./actor.js";
import type { AuditAction, AuditDetails, AuditDraft } from "./entry.js";
import type { AuditTrail } from "./trail.js";

/** One action to run and record: what it is, on which campaign, and the details of its end. */
export interface AuditedStep<T> {
  action: AuditAction;
  campaign: string | null;
  /** Details known before it runs (a retry's mode); merged under those of its end. */
  details?: AuditDetails;
  /**
   * The step; one that lets spending start calls `first` once its checks have passed and before
   * its effect: its `ok` entry is then written there, durable before a worker can see the
   * effect (docs/architecture/audit.md, "An entry before its effect"), and none after.
   */
  run: (first: RecordFirst) => Promise<T>;
  /** The details of what it did, from its result. */
  done?: (value: T) => AuditDetails;
}

/**
 * Writes the step's `ok` entry now, with these details (over the step's own); resolves to what
 * writes its second entry if the effect then falls short of it.
 */
export type RecordFirst = (details: AuditDetails) => Promise<Amend>;

/**
 * A second entry, `refused`, after one written first: a move refused after the entry (the
 * campaign or order changed meanwhile), with the reason and the details of what was done.
 */
export type Amend = (reason: string, details: AuditDetails) => Promise<void>;

/**
 * Runs the step and appends one entry for it (docs/architecture/audit.md, "What is recorded"):
 * `ok` with what it did, `refused` with the reason when a rule or a check said no (a
 * UserError), `failed` with the reason otherwise; the step's error is then thrown as it was.
 * Without a trail (PostgreSQL away, for a command that goes on without it, having said so)
 * nothing is recorded.
 */
export async function audited<T>(
  trail: AuditTrail | undefined,
  actor: Actor,
  step: AuditedStep<T>,
): Promise<T> {
  const draft = (result: AuditDraft["result"], details: AuditDetails, reason?: string) => ({
    actor,
    action: step.action,
    campaign: step.campaign,
    details: { ...step.details, ...details },
    result,
    ...(reason === undefined ? {} : { reason }),
  });
  // "first": the entry written before the effect; "failed": that write failed, nothing done.
  let written: "first" | "failed" | undefined;
  const first: RecordFirst = async (details) => {
    written = "failed";
    await trail?.append(draft("ok", details));
    written = "first";
    return async (reason, end) => {
      await appendAfter(trail, step, draft("refused", end, reason));
    };
  };
  let value: T;
  try {
    value = await step.run(first);
  } catch (error) {
    if (written === "failed") throw error;
    // A step that stopped after its entry: a second one says the effect was not made.
    const reason = firstLine(error);
    await trail?.append(draft(error instanceof UserError ? "refused" : "failed", {}, reason));
    throw error;
  }
  if (written === "first") return value;
  await appendAfter(trail, step, draft("ok", step.done?.(value) ?? {}));
  return value;
}

/** An entry of a step already done: one that cannot be written is a RunError saying so. */
async function appendAfter(
  trail: AuditTrail | undefined,
  step: { action: string; campaign: string | null },
  draft: AuditDraft,
): Promise<void> {
  try {
    await trail?.append(draft);
  } catch (error) {
    throw new RunError(
      `${step.action}${step.campaign ? ` of campaign ${step.campaign}` : ""} was done, but the audit trail (${trail?.place}) could not record it: ${firstLine(error)}`,
      { cause: error },
    );
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/**
 * The entries of an action whose first entry records its plan, written before its effect
 * (docs/architecture/audit.md, "An entry before its effect").
 */
export interface PlannedEntries<P, R> {
  /** Writes the plan's entry; its error stops the effect before anything is changed. */
  plan(plan: P): Promise<void>;
  /** Why the effect ended otherwise than its plan; undefined when the plan's entry says it. */
  shortfall(plan: P, end: R): string | undefined;
  /** Writes the second entry: how it ended, and why (the shortfall). */
  amend(reason: string, end: R): Promise<void>;
}

/**
 * Entry first, then effect, then a second entry when it ended otherwise (retry, import,
 * reconcile). `before` is the hook the effect calls once its checks have passed and before it
 * changes anything (beforeMove, beforeRecording, beforeSettle); `end` is given how it ended.
 */
export class EntryFirst<P, R> {
  private planned: { plan: P } | undefined;

  constructor(private readonly entries: PlannedEntries<P, R>) {}

  readonly before = async (plan: P): Promise<void> => {
    await this.entries.plan(plan);
    this.planned = { plan };
  };

  /**
   * The second entry, when the end is not the plan. False when no plan was written (the effect
   * stopped before its hook): how it ended is then the caller's to record.
   */
  async end(end: R): Promise<boolean> {
    if (!this.planned) return false;
    const reason = this.entries.shortfall(this.planned.plan, end);
    if (reason !== undefined) await this.entries.amend(reason, end);
    return true;
  }
}

/** Runs `effect` with EntryFirst's hook, then records its end. */
export async function planFirst<P, R>(
  entries: PlannedEntries<P, R>,
  effect: (before: (plan: P) => Promise<void>) => Promise<R>,
): Promise<R> {
  const first = new EntryFirst(entries);
  const end = await effect(first.before);
  await first.end(end);
  return end;
}

/**
 * PlannedEntries of an audited step (RecordFirst): the plan's entry `ok`, a second one `refused`
 * with the shortfall and the details of what was done. `first` may write nothing (the
 * dashboard without a trail), and then no second entry is written either.
 */
export function firstThenAmend<P, R>(
  first: (plan: P) => Promise<Amend | undefined>,
  shortfall: (plan: P, end: R) => string | undefined,
  endDetails: (end: R) => AuditDetails,
): PlannedEntries<P, R> {
  let amend: Amend | undefined;
  return {
    plan: async (plan) => {
      amend = await first(plan);
    },
    shortfall,
    amend: async (reason, end) => {
      await amend?.(reason, endDetails(end));
    },
  };
}
