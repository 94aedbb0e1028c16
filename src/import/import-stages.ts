import type { JobsOptions } from "bullmq";
import type { ExecutionMode } from "../api/order-request.js";
import { REPEAT_WINDOW_DAYS } from "../campaigns/earlier-payments.js";
import type { DailyLimit } from "../daily-limit.js";
import type { Budget } from "../orders/budget.js";
import type { ImportOptions, ImportProgress, ImportResult, SpendPlan } from "./import-types.js";
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

/** How the import runs as a whole: a dry run, invalid rows skipped, the question, progress. */
interface RunOptions {
  dryRun: boolean;
  skipInvalid: boolean;
  errorFile?: string;
  confirm?: (plan: SpendPlan) => Promise<boolean>;
  beforeRecording?: (planned: ImportResult) => Promise<void>;
  onProgress?: (progress: ImportProgress) => void;
}

/** The import's flags, each stage's own: what a stage is not given it cannot depend on. */
export interface ImportStages {
  read: ReadOptions;
  header: HeaderOptions;
  validation: ValidationOptions;
  pricing: PricingOptions;
  recording: RecordingOptions;
  run: RunOptions;
}

/**
 * The flat options of `importCampaign` turned once into the values each stage takes, their
 * defaults applied here: no stage reads the whole options object.
 */
export function importStages(options: ImportOptions): ImportStages {
  return {
    read: {
      file: options.file,
      delimiter: options.delimiter,
      sheet: options.sheet,
      maxUnzippedBytes: options.maxUnzippedBytes,
    },
    header: {
      map: options.map,
      emailOptional: options.distribution === "link",
      ...options.header,
    },
    validation: {
      risky: {
        file: options.file,
        allowExample: options.allowExample,
        fromReport: options.fromReport,
      },
      row: {
        defaultTemplateId: options.defaultTemplateId,
        defaultDistribution: options.distribution,
        defaultCurrency: options.currency,
        ...decimalCommaOf(options),
      },
      preflight: { currency: options.currency },
    },
    pricing: {
      budgets: options.budgets ?? [],
      approvalThreshold: options.approvalThreshold,
      dailyLimit: options.dailyLimit,
      balanceCheck: options.balanceCheck !== false,
    },
    recording: {
      campaign: options.campaign,
      append: Boolean(options.append),
      hold: Boolean(options.hold),
      executionMode: options.executionMode ?? "async",
      itemsPerOrder: options.itemsPerOrder,
      jobOptions: options.jobOptions,
      actor: options.actor,
      repeats: options.repeats ?? "refuse",
      repeatWindowDays: options.repeatWindowDays ?? REPEAT_WINDOW_DAYS,
    },
    run: {
      dryRun: options.dryRun ?? false,
      skipInvalid: Boolean(options.skipInvalid),
      errorFile: options.errorFile,
      confirm: options.confirm,
      beforeRecording: options.beforeRecording,
      onProgress: options.onProgress,
    },
  };
}

/**
 * Whether face values use a decimal comma (see ImportOptions.decimalComma). It is told once an
 * import, so each import turns its options into stages once.
 */
function decimalCommaOf(
  options: ImportOptions,
): Pick<ValidateRowOptions, "decimalComma" | "onDecimalComma"> {
  const assumed = options.decimalComma === undefined && options.delimiter === ";";
  let told = false;
  return {
    decimalComma: options.decimalComma ?? (assumed ? "either" : false),
    onDecimalComma: () => {
      if (!told) options.onDecimalComma?.(assumed);
      told = true;
    },
  };
}
