// `orders import`'s flags: one schema parses them, with the settings, into each stage's values
// (docs/architecture/import.md, "Options in one shape"); a new option is a field here and the
// options of the stage that uses it.
import { join, resolve } from "node:path";
import * as z from "zod";
import { REPEAT_WINDOW_DAYS } from "../campaigns/earlier-payments.js";
import type { Config } from "../config.js";
import { dailyLimitOf } from "../daily-limit.js";
import { UserError } from "../errors/user-error.js";
import { type Budget, currencyCode, parseBudget } from "../orders/budget.js";
import type { RedisSettings } from "../redis/connection.js";
import type { StoreSettings } from "../stores/stores.js";
import { parseColumnMap } from "./header/column-map.js";
import {
  decimalCommaOf,
  type ImportHooks,
  type ImportStages,
  type RecordingOptions,
  type StageValues,
  stagesWith,
} from "./import-stages.js";

/**
 * `orders import FILE`'s flags as commander parsed them (src/cli/definitions/orders.ts), and the
 * file: parsed in one step into the stages' values (importCommandSchema). A new option is added
 * there and in the stage that uses it (ImportStages, src/import/import-stages.ts), nowhere else
 * (docs/architecture/import.md, "Options in one shape").
 */
export type ImportFlags = z.input<ReturnType<typeof importCommandSchema>>;

/** `orders import` parsed: what the command does itself, and each stage's values. */
export type ImportCommand = z.output<ReturnType<typeof importCommandSchema>>;

const flag = z.boolean().optional();

/** Checked before the file is read: without a snapshot, every row needs this one currency. */
const NO_CATALOG_NEEDS_CURRENCY =
  "--no-catalog-check needs --currency CUR: the currency every row pays in";

/**
 * The schema of `orders import`: its flags and the settings it reads, parsed into the values
 * each import stage takes (StageValues) beside what the command itself decides (--yes, --json,
 * the catalog check, --hold as given). A bad value throws the UserError naming its flag.
 */
function importCommandSchema(settings: StageSettings) {
  return IMPORT_FLAGS.refine(
    (f) => f.catalogCheck || f.currency !== undefined,
    NO_CATALOG_NEEDS_CURRENCY,
  ).transform((f) => ({
    yes: Boolean(f.yes),
    /** --hold as given; GIFTJOBS_REQUIRE_APPROVAL holds the campaign too (recording.hold). */
    hold: Boolean(f.hold),
    json: Boolean(f.json),
    catalogCheck: f.catalogCheck,
    stages: stageValuesOf(f, settings),
  }));
}

/** The flags as commander gives them, each parsed to its value (a bad one names its flag). */
const IMPORT_FLAGS = z.object({
  file: z.string(),
  campaign: z.string(),
  dryRun: flag,
  skipInvalid: flag,
  errorFile: z.string().optional(),
  budget: z
    .array(z.string())
    .default([])
    .transform((given) => given.map(parseBudget)),
  yes: flag,
  hold: flag,
  append: flag,
  allowRepeats: flag,
  skipRepeats: flag,
  executionMode: z.enum(["async", "sync"]).default("async"),
  itemsPerOrder: z.number().optional(),
  templateId: z.string().optional(),
  distribution: z.enum(["email", "link", "recipient"]).optional(),
  map: z
    .array(z.string())
    .optional()
    .transform((given) => given && parseColumnMap(given)),
  strictColumns: flag,
  delimiter: z.string().optional(),
  decimalComma: flag,
  sheet: z.string().optional(),
  headerRow: z.number().optional(),
  maxUnzippedMb: z.number().optional(),
  currency: z
    .string()
    .optional()
    .transform((given) => (given === undefined ? undefined : currencyCode("--currency", given))),
  catalogCheck: z.boolean().default(true),
  balanceCheck: z.boolean().default(true),
  allowExample: flag,
  fromReport: flag,
  json: flag,
});

type ParsedFlags = z.output<typeof IMPORT_FLAGS>;

/** Each stage's values: the flags parsed, over the settings' defaults. */
function stageValuesOf(f: ParsedFlags, settings: StageSettings): StageValues {
  return {
    read: {
      file: f.file,
      delimiter: f.delimiter,
      sheet: f.sheet,
      maxUnzippedBytes: f.maxUnzippedMb === undefined ? undefined : f.maxUnzippedMb * 2 ** 20,
    },
    header: {
      map: f.map,
      emailOptional: f.distribution === "link",
      strictColumns: f.strictColumns,
      headerRow: f.headerRow,
    },
    validation: {
      risky: { file: f.file, allowExample: f.allowExample, fromReport: f.fromReport },
      row: {
        defaultTemplateId: f.templateId ?? settings.templateId,
        defaultDistribution: f.distribution,
        defaultCurrency: f.currency,
        decimalComma: decimalCommaOf(f.decimalComma, f.delimiter),
      },
      preflight: { currency: f.currency },
    },
    pricing: {
      budgets: f.budget,
      approvalThreshold: settings.approvalThreshold,
      dailyLimit: dailyLimitOf({
        dailyLimit: settings.dailyLimit,
        limitTz: settings.limitTz ?? "UTC",
      }),
      balanceCheck: f.balanceCheck,
    },
    recording: {
      campaign: f.campaign,
      append: Boolean(f.append),
      hold: Boolean(f.hold) || settings.requireApproval === true,
      executionMode: f.executionMode,
      itemsPerOrder: f.itemsPerOrder,
      repeats: f.allowRepeats ? "allow" : f.skipRepeats ? "skip" : "refuse",
      repeatWindowDays: settings.repeatWindowDays ?? REPEAT_WINDOW_DAYS,
    },
    run: {
      dryRun: Boolean(f.dryRun),
      skipInvalid: Boolean(f.skipInvalid),
      errorFile: errorFileOf(f, settings),
    },
  };
}

/**
 * --error-file made absolute, else one per import under the campaign's folder; none without a
 * data dir (a library caller that names no file and no data dir).
 */
function errorFileOf(
  f: Pick<ParsedFlags, "errorFile" | "campaign">,
  settings: StageSettings,
): string | undefined {
  if (f.errorFile !== undefined) return resolve(f.errorFile);
  if (settings.dataDir === undefined) return undefined;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return resolve(join(settings.dataDir, "campaigns", f.campaign, `invalid-rows-${stamp}.csv`));
}

/**
 * `orders import`'s flags parsed (importCommandSchema). A value of the wrong type (commander
 * gives the right ones) is a UserError naming its flag all the same.
 */
export function parseImportCommand(flags: ImportFlags, settings: StageSettings): ImportCommand {
  const parsed = importCommandSchema(settings).safeParse(flags);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.path.length === 0) throw new UserError(issue.message);
  const name = String(issue.path[0]);
  const option =
    name === "file" ? "FILE" : `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  throw new UserError(`${option}: ${issue.message}`);
}

/** What an import's entries name: its file, campaign, --append and --budget. */
export interface ImportNamed {
  file: string;
  campaign: string;
  append?: boolean;
  budgets: readonly Budget[];
}

/** What an import's audit entries name: the file, the campaign, --append and --budget. */
export function namedOf({ stages }: Pick<ImportCommand, "stages">): ImportNamed {
  return {
    file: stages.read.file,
    campaign: stages.recording.campaign,
    append: stages.recording.append,
    budgets: stages.pricing.budgets,
  };
}

/**
 * The settings the flags default to (GIFTJOBS_TEMPLATE_ID, GIFTJOBS_REQUIRE_APPROVAL, the
 * four-eyes threshold, the repeats window, the daily limit and its time zone) and the data dir
 * the error file goes under. Unset: as when the setting is not set.
 */
export type StageSettings = Partial<
  Pick<
    Config,
    | "templateId"
    | "requireApproval"
    | "approvalThreshold"
    | "repeatWindowDays"
    | "dailyLimit"
    | "limitTz"
    | "dataDir"
  >
>;

/** What `orders import` takes from the configuration. */
export type ImportSettings = StageSettings &
  Pick<Config, "templateId" | "requireApproval"> &
  StoreSettings &
  RedisSettings;

/**
 * importCampaign's options (the library's): `orders import`'s flags as the command takes them
 * (docs/commands.md), the settings they default to, and what the import tells and asks as it
 * goes. They are parsed by the command's own schema (importStages), so the library and the
 * command cannot differ in a default or a check.
 */
export type ImportOptions = Omit<ImportFlags, "yes" | "json"> &
  ImportHooks & {
    /** The settings the flags default to; none: the defaults of unset settings. */
    settings?: StageSettings;
    /**
     * Attempts and backoff of the order jobs, recorded on a new campaign for the dispatcher.
     * @defaultValue ORDER_JOB_OPTIONS
     */
    jobOptions?: RecordingOptions["jobOptions"];
    /** Who runs the import (src/audit/actor.ts). @defaultValue the current actor's name */
    actor?: string;
  };

/** What importCampaign takes besides the flags: a name not here nor a flag is refused. */
const LIBRARY_OPTIONS = new Set<string>([
  "settings",
  "jobOptions",
  "actor",
  ...(Object.keys({
    onHeader: true,
    onTotalsRow: true,
    onDecimalComma: true,
    confirm: true,
    beforeRecording: true,
    onProgress: true,
  } satisfies Record<keyof ImportHooks, true>) as (keyof ImportHooks)[]),
]);

/**
 * importCampaign's options parsed by the command's schema into each stage's values. A name that
 * is no option throws (a TypeError: a caller's mistake), where the schema would drop it: an
 * option spelled wrong would otherwise be an import without it.
 */
export function importStages(options: ImportOptions): ImportStages {
  const unknown = Object.keys(options).filter(
    (name) => !(name in IMPORT_FLAGS.shape) && !LIBRARY_OPTIONS.has(name),
  );
  if (unknown.length > 0) throw new TypeError(`importCampaign: no option ${unknown.join(", ")}`);
  const { settings = {}, jobOptions, actor } = options;
  const { stages } = parseImportCommand(options, settings);
  return stagesWith({ ...stages, recording: { ...stages.recording, jobOptions, actor } }, options);
}
