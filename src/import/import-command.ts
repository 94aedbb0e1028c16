import type { ApiClient } from "../api/client.js";
import { fourEyesRuleWords } from "../campaigns/four-eyes.js";
import { loadCurrentIndex } from "../catalog/current-snapshot.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import { catalogPlace, fillCatalogHint } from "../catalog/no-snapshot-error.js";
import { DatabaseDownError } from "../db/database-error.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import { plural } from "../plural.js";
import type { RedisSettings } from "../redis/connection.js";
import { isRedisAway, redisAddress } from "../redis/outage-reporter.js";
import type { Stores } from "../stores/stores.js";
import { importStaged } from "./import-campaign.js";
import { ImportDeclined, ImportRefused } from "./import-errors.js";
import type { ImportCommand, ImportSettings } from "./import-flags.js";
import { type ImportHooks, type ImportStages, stagesWith } from "./import-stages.js";
import type { ImportProgress, ImportResult, SpendPlan } from "./import-types.js";
import type { ReadOrderRowsOptions } from "./readers/csv-rows.js";
import { OrderFileError } from "./readers/order-file-error.js";
/** An import ready to run: its command, its settings, the catalog to check rows against. */
export interface PreparedImport {
  command: ImportCommand;
  settings: ImportSettings;
  /** The current catalog snapshot's index; undefined with --no-catalog-check. */
  catalog: CatalogIndex | undefined;
}

/**
 * The terminal side of an import: the prompt, and what is shown as it goes.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export interface ImportTerminal {
  /** A question can be asked: input and output are both terminals. */
  canAsk: boolean;
  /** Shows the plan and asks whether to spend: true for yes. */
  ask(plan: SpendPlan): Promise<boolean>;
  onHeader: NonNullable<ReadOrderRowsOptions["onHeader"]>;
  /** Told of each totals row the reader leaves out. */
  onTotalsRow?: ReadOrderRowsOptions["onTotalsRow"];
  onDecimalComma(assumed: boolean): void;
  onProgress(progress: ImportProgress): void;
}

/** How an import runs from the command line: services, log, terminal, and its printing. */
export interface ImportIo extends ImportTerminal {
  /**
   * Opens the ledger, the API client and the stores (files, or PostgreSQL when configured: the
   * journal's and the overrides' place) around `fn`, and closes them after.
   */
  withServices<T>(
    fn: (services: { ledger: Ledger; client: ApiClient; stores: Stores }) => Promise<T>,
  ): Promise<T>;
  log: Logger;
  /** The import ended, however it ended: a progress bar stops here, before anything is printed. */
  ended(): void;
  /** Prints how the import ended, while the services are still open. */
  print(end: ImportEnd): void;
  /**
   * Records what the import is about to record in the audit trail, durably, before the campaign
   * or any row is recorded (ImportHooks.beforeRecording); an error stops the import there.
   */
  auditPlanned?(planned: ImportResult, stores: Stores | undefined): Promise<void>;
  /**
   * Records how it ended in the audit trail (src/import/import-audit.ts), in the import's
   * stores when they are open, before anything is printed; told of every end, a dry run's
   * included (after auditPlanned's entry, it writes a second only when the end is not the plan:
   * EntryFirst, src/audit/audited.ts).
   */
  audit?(end: ImportEnd, stores: Stores | undefined): Promise<void>;
}

/** `orders import --json`: one document on every exit. */
type ImportJson = ReturnType<typeof importJson> | ReturnType<typeof refusalJson>;

/** How `orders import` ended: its exit code, and what there is to print. */
export type ImportEnd =
  | { kind: "imported"; code: 0; result: ImportResult; json: ImportJson; notes: string[] }
  | { kind: "declined"; code: 1; result: ImportResult; json: ImportJson; message: string }
  | { kind: "refused"; code: 2; error: ImportRefused; json: ImportJson }
  | { kind: "redis_lost"; code: 1; json: ImportJson; line: string };

/**
 * The checks of `orders import` before its file is read, and what it needs to run: the catalog
 * snapshot, read from the import's stores (opened once for the whole import: the CLI passes the
 * same ones to withServices).
 */
export async function prepareImport(
  command: ImportCommand,
  { settings, stores }: { settings: ImportSettings; stores: Stores },
): Promise<PreparedImport> {
  // The configured store: PostgreSQL when GIFTJOBS_DATABASE_URL is set, else the data dir's files.
  const catalog = command.catalogCheck ? await loadCurrentIndex(stores.catalog) : undefined;
  if (command.catalogCheck && !catalog) {
    throw new UserError(
      `no catalog snapshot in ${catalogPlace(settings)}: ${fillCatalogHint(Boolean(settings.databaseUrl))}, or pass --no-catalog-check`,
    );
  }
  return { command, settings, catalog };
}

/**
 * The import's stages: the command's values, with the terminal's prompt and progress.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function importStagesOf(
  { stages, yes }: ImportCommand,
  terminal: ImportTerminal & Pick<ImportHooks, "beforeRecording">,
): ImportStages {
  const confirm = confirmStep({
    yes,
    hold: stages.recording.hold,
    dryRun: stages.run.dryRun,
    canAsk: terminal.canAsk,
    ask: (plan) => terminal.ask(plan),
  });
  return stagesWith(stages, { ...terminal, confirm });
}

/** The confirm step's choice: --yes, --hold, --dry-run, and the terminal's prompt. */
export interface ConfirmStepChoice {
  /** --yes: import and send without asking. */
  yes?: boolean;
  /** --hold or GIFTJOBS_REQUIRE_APPROVAL: recorded held, nothing spent until approved. */
  hold?: boolean;
  dryRun?: boolean;
  /** Input and output are both terminals. */
  canAsk: boolean;
  /** Shows the plan and asks. */
  ask(plan: SpendPlan): Promise<boolean>;
}

/**
 * The `confirm` of an import, or none when there is nothing to ask: with --yes, with --hold
 * (nothing is spent before `orders approve`) and on a dry run. On a terminal (input and output
 * both TTYs) it shows the plan and asks; without one it refuses (UserError, exit 2): an
 * unattended import must say --yes or --hold.
 */
export function confirmStep(
  choice: ConfirmStepChoice,
): ((plan: SpendPlan) => Promise<boolean>) | undefined {
  if (choice.yes || choice.hold || choice.dryRun) return undefined;
  if (!choice.canAsk) {
    return async (plan) => {
      throw new UserError(
        `campaign ${plan.campaign}: ${plan.rows} new ${plural(plan.rows, "row")} to spend on and no terminal to ask: pass --yes to import and send them, or --hold to record the campaign held until \`orders approve\`; nothing was recorded`,
      );
    };
  }
  return (plan) => choice.ask(plan);
}

/**
 * Runs `orders import`: the import, then `io.print` of how it ended; returns the exit code.
 * Errors other than a refusal, a decline or Redis lost mid-way are thrown.
 */
export async function runImportCommand(prepared: PreparedImport, io: ImportIo): Promise<number> {
  // Rows recorded so far, and whether Redis answered at the start (for a Redis lost mid-way).
  let recorded = 0;
  let connected = false;
  // The import's stores once open.
  let stores: Stores | undefined;
  const stages = importStagesOf(prepared.command, {
    ...io,
    onProgress: (p) => {
      if (p.phase === "enqueue") recorded = p.enqueued;
      io.onProgress(p);
    },
    beforeRecording: async (plan) => {
      await io.auditPlanned?.(plan, stores);
    },
  });
  const { catalog } = prepared;
  try {
    return await io.withServices(async ({ ledger, client, stores: open }) => {
      connected = true;
      stores = open;
      const deps = { ledger, catalog, client, log: io.log, stores };
      const end = await importStaged(stages, deps).then(
        (result) => {
          io.ended();
          return importedEnd(result, prepared);
        },
        (error: unknown) => {
          io.ended();
          return stoppedEnd(error);
        },
      );
      await auditThenPrint(io, end, stores);
      return end.code;
    });
  } catch (error) {
    const lostDatabase = error instanceof DatabaseDownError;
    if (!connected || !(isRedisAway(error) || lostDatabase)) throw error;
    io.ended();
    const end = lostDatabase
      ? databaseLostEnd(prepared, recorded, error)
      : redisLostEnd(prepared, recorded);
    await auditThenPrint(io, end, undefined);
    return end.code;
  }
}

/**
 * The end's entry first, then what is printed (docs/architecture/audit.md, "An entry before
 * its effect"): output that cannot be written stops nothing before the entry. An entry that
 * cannot be written is the command's error, after the end is printed all the same.
 */
async function auditThenPrint(
  io: ImportIo,
  end: ImportEnd,
  stores: Stores | undefined,
): Promise<void> {
  try {
    await io.audit?.(end, stores);
  } finally {
    io.print(end);
  }
}

/**
 * An import that ran to its end: exit 0, with notes for stderr.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function importedEnd(result: ImportResult, prepared: PreparedImport): ImportEnd {
  const { command, settings } = prepared;
  const notes = (result.budgets_replaced ?? []).map(
    (r) => `campaign ${result.campaign}: its ${r.currency} budget ${r.from} is replaced by ${r.to}`,
  );
  if (result.four_eyes && result.state === "held" && !result.dry_run)
    notes.push(
      `campaign ${result.campaign} is held: ${fourEyesRuleWords(result.four_eyes)} passes GIFTJOBS_APPROVAL_THRESHOLD, so a user of the users file with the approve role, not who imported it, must send it: \`giftjobs orders approve --campaign ${result.campaign}\` with their token (GIFTJOBS_USER_TOKEN or --token-file), or on the dashboard (four eyes)`,
    );
  else if (settings.requireApproval && !command.hold && result.state === "held" && !result.dry_run)
    notes.push(
      `GIFTJOBS_REQUIRE_APPROVAL is set: campaign ${result.campaign} is held${command.yes ? " even with --yes" : ""}; send it with \`giftjobs orders approve --campaign ${result.campaign}\``,
    );
  return { kind: "imported", code: 0, result, json: importJson(result), notes };
}

/**
 * An import that stopped: declined (exit 1) or refused (exit 2); any other error is thrown.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function stoppedEnd(error: unknown): ImportEnd {
  if (error instanceof ImportDeclined) {
    const json = importJson(error.result, error.message);
    return { kind: "declined", code: 1, result: error.result, json, message: error.message };
  }
  if (!(error instanceof ImportRefused)) throw error;
  // The rows' errors, and the refusal's own reason unless it is those rows.
  const json = importJson(error.result, error.forRows ? undefined : error.message);
  return { kind: "refused", code: 2, error, json };
}

/**
 * Redis went away after the import started: exit 1, saying what was recorded.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function redisLostEnd(prepared: PreparedImport, recorded: number): ImportEnd {
  const line = redisLostLine(prepared.settings, recorded);
  // --json promises one document on every exit: what was recorded, and why it stopped.
  const json = {
    ...refusalJson(prepared.command.stages.recording.campaign, new UserError(line)),
    enqueued: recorded,
  };
  return { kind: "redis_lost", code: 1, json, line };
}

/**
 * PostgreSQL, where the journal is, went away mid-import: every order recorded in Redis was
 * journaled first, none other reached it, and the same import run again records the rest
 * (docs/operations.md, "PostgreSQL down").
 */
function databaseLostEnd(
  prepared: PreparedImport,
  recorded: number,
  error: DatabaseDownError,
): ImportEnd {
  const line = `giftjobs: ${error.message.replace(/: is it running\? \(GIFTJOBS_DATABASE_URL\)$/, "")} during the import (GIFTJOBS_DATABASE_URL): ${recorded} ${plural(recorded, "row was", "rows were")} recorded, each journaled first; run the same import again once it answers to record the rest`;
  const json = {
    ...refusalJson(prepared.command.stages.recording.campaign, new UserError(line)),
    enqueued: recorded,
  };
  // Printed as a lost Redis is: the line on stderr, exit 1.
  return { kind: "redis_lost", code: 1, json, line };
}

/**
 * Redis went away mid-import: what is recorded stays (each batch is recorded whole), and a
 * second run of the same import records only what is missing. `recorded` counts the batches
 * Redis answered for: the one it was sent when it went away may be recorded too (its answer
 * lost), hence "at least"; the second run names it among the rows already known.
 */
function redisLostLine(settings: RedisSettings, recorded: number): string {
  return `giftjobs: Redis went away during the import (${redisAddress(settings)} stopped answering): at least ${recorded} ${plural(recorded, "row was", "rows were")} recorded; run the same import again to record the rest`;
}

/**
 * `orders import --json`: the result, and in `errors` after the rows' own errors the reason the
 * import stopped when it is not those rows (`reason`, with no line), so no refusal is silent.
 */
function importJson(r: ImportResult, reason?: string) {
  const stopped = reason === undefined ? [] : [{ line: null, message: reason }];
  return {
    campaign: r.campaign,
    rows: r.rows,
    valid: r.valid,
    invalid: r.invalid,
    enqueued: r.enqueued,
    already_known: r.already_known,
    orders: r.orders,
    totals: Object.fromEntries(
      Object.entries(r.totals).map(([c, t]) => [c, { face_value: t.face_value, price: t.price }]),
    ),
    ...(r.priced_by ? { priced_by: r.priced_by } : {}),
    ...(r.pricing_note ? { pricing_note: r.pricing_note } : {}),
    errors: [...r.errors, ...stopped],
    ...(r.more_errors ? { more_errors: r.more_errors } : {}),
    ...(r.problems ? { problems: r.problems } : {}),
    ...(r.left_out ? { left_out: r.left_out } : {}),
    ...(r.error_file ? { error_file: r.error_file } : {}),
    state: r.state ?? null,
    ...(r.budgets_replaced ? { budgets_replaced: r.budgets_replaced } : {}),
    ...(r.repeats ? { repeats: r.repeats } : {}),
    ...(r.daily_limit ? { daily_limit: r.daily_limit } : {}),
    ...(r.four_eyes ? { four_eyes: r.four_eyes } : {}),
  };
}

/**
 * `orders import --json` when the import stopped before any row was judged (a bad header, a
 * quote never closed, an unreadable file, a bad flag): nothing valid, nothing invalid, and the
 * reason in `errors`, with its line (null when it is not about a line) and column where known.
 */
export function refusalJson(campaign: string, error: UserError) {
  const errors =
    error instanceof OrderFileError
      ? error.errors.map((e) => ({
          line: e.line,
          ...(e.column ? { column: e.column } : {}),
          message: e.message,
        }))
      : [{ line: null, message: error.message }];
  return {
    campaign,
    rows: 0,
    valid: 0,
    invalid: 0,
    enqueued: 0,
    already_known: 0,
    orders: 0,
    totals: {},
    errors,
  };
}
