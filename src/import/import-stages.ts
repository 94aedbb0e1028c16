import type { JobsOptions } from "bullmq";
import type { ExecutionMode } from "../api/order-request.js";
import { currentActor } from "../audit/actor.js";
import type { DailyLimit } from "../daily-limit.js";
import type { Budget } from "../orders/budget.js";
import type { ImportProgress, ImportResult, SpendPlan } from "./import-types.js";
import type { ReadOrderFileOptions } from "./readers/order-file.js";
import type { RepeatsChoice } from "./repeats.js";
import type { PreflightOptions } from "./validation/preflight.js";
import type { RiskyFileOptions } from "./validation/risky-files.js";
import type { ValidateRowOptions } from "./validation/row-validation.js";

/** Reading the file (readers/): where it is and how its bytes become rows. */
export type ReadOptions = Pick<ReadOrderFileOptions, "delimiter" | "sheet" | "maxUnzippedBytes"> & {
  file: string;
};

/** Finding and checking the header (header/), and who is told about it. */
export type HeaderOptions = Pick<
  ReadOrderFileOptions,
  "map" | "headerRow" | "strictColumns" | "emailOptional" | "onHeader" | "onTotalsRow"
>;

/** Validating the rows (validation/): the file's risks, each row's cells, the catalog's check. */
export interface ValidationOptions {
  risky: RiskyFileOptions;
  /** Each row's cells; the reference tracker is the survey's, one per file. */
  row: Omit<ValidateRowOptions, "references" | "now">;
  preflight: PreflightOptions;
}

/** What the new rows may cost, checked between the passes (budgets, four eyes, limits). */
interface PricingOptions {
  budgets: readonly Budget[];
  approvalThreshold?: Readonly<Record<string, string>>;
  dailyLimit?: DailyLimit;
  /** Ask the service for the account balance; off with --no-balance-check. */
  balanceCheck: boolean;
}

/** Recording the campaign (pass 2), and what decides whether rows may go into it. */
export interface RecordingOptions {
  campaign: string;
  append: boolean;
  /** Recorded held; four eyes may hold it too, after pass 1. */
  hold: boolean;
  executionMode: ExecutionMode;
  itemsPerOrder?: number;
  jobOptions?: Pick<JobsOptions, "attempts" | "backoff">;
  actor?: string;
  repeats: RepeatsChoice;
  repeatWindowDays: number;
}

/**
 * Who runs the import: the actor named (`--as`, a token's user) or the current one
 * (src/audit/actor.ts). Recorded on a held campaign and counted in their day, both by this name.
 */
export function importerOf(recording: Pick<RecordingOptions, "actor">): string {
  return recording.actor ?? currentActor().name;
}

/** How the import runs as a whole: a dry run, invalid rows skipped, the question, progress. */
interface RunOptions {
  dryRun: boolean;
  skipInvalid: boolean;
  errorFile?: string;
  confirm?: (plan: SpendPlan) => Promise<boolean>;
  beforeRecording?: (planned: ImportResult) => Promise<void>;
  onProgress?: (progress: ImportProgress) => void;
}

/**
 * The import's flags, each stage's own: what a stage is not given it cannot depend on.
 *
 * A new option of `orders import` is added in two places: the command's schema
 * (importCommandSchema, src/import/import-flags.ts), which parses the flag straight into the
 * value of the stage that uses it, and that stage's options here (docs/architecture/import.md,
 * "Options in one shape"). importCampaign (the library's) takes the same flags and parses them
 * through the same schema, so it has the option too.
 */
export interface ImportStages {
  read: ReadOptions;
  header: HeaderOptions;
  validation: ValidationOptions;
  pricing: PricingOptions;
  recording: RecordingOptions;
  run: RunOptions;
}

/** What the import tells and asks as it goes: the terminal's (or a caller's) functions. */
export interface ImportHooks {
  onHeader?: HeaderOptions["onHeader"];
  onTotalsRow?: HeaderOptions["onTotalsRow"];
  /** Told once, at the first face_value read with a decimal comma, whether that was assumed. */
  onDecimalComma?: (assumed: boolean) => void;
  confirm?: RunOptions["confirm"];
  beforeRecording?: RunOptions["beforeRecording"];
  onProgress?: RunOptions["onProgress"];
}

/** The stages' values without their hooks: what a command's schema parses its flags into. */
export interface StageValues {
  read: ReadOptions;
  header: Omit<HeaderOptions, "onHeader" | "onTotalsRow">;
  validation: Omit<ValidationOptions, "row"> & {
    row: Omit<ValidationOptions["row"], "onDecimalComma">;
  };
  pricing: PricingOptions;
  recording: RecordingOptions;
  run: Omit<RunOptions, "confirm" | "beforeRecording" | "onProgress">;
}

/** The stages: their values, and the hooks each is told through. */
export function stagesWith(values: StageValues, hooks: ImportHooks): ImportStages {
  const { header, validation, run } = values;
  return {
    ...values,
    header: { ...header, onHeader: hooks.onHeader, onTotalsRow: hooks.onTotalsRow },
    validation: {
      ...validation,
      row: { ...validation.row, onDecimalComma: toldOnce(validation.row, hooks) },
    },
    run: {
      ...run,
      confirm: hooks.confirm,
      beforeRecording: hooks.beforeRecording,
      onProgress: hooks.onProgress,
    },
  };
}

/**
 * Whether face values use a decimal comma (`--decimal-comma`): unset, a
 * ';'-separated file reads either mark ("either", assumed).
 */
export function decimalCommaOf(
  decimalComma: boolean | undefined,
  delimiter: string | undefined,
): boolean | "either" {
  return decimalComma ?? (delimiter === ";" ? "either" : false);
}

/** The row stage's onDecimalComma: the hook told once an import whether it was assumed. */
function toldOnce(
  row: StageValues["validation"]["row"],
  hooks: ImportHooks,
): ValidateRowOptions["onDecimalComma"] {
  const assumed = row.decimalComma === "either";
  let told = false;
  return () => {
    if (!told) hooks.onDecimalComma?.(assumed);
    told = true;
  };
}
