import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { loadCurrentIndex } from "../../catalog/current-snapshot.js";
import type { Config } from "../../config.js";
import { UserError } from "../../errors/user-error.js";
import { parseColumnMap } from "../../import/header/column-map.js";
import { headerReportText } from "../../import/header/header-report.js";
import { importCampaign } from "../../import/import-campaign.js";
import { ImportDeclined, ImportRefused } from "../../import/import-errors.js";
import type { ImportResult } from "../../import/import-types.js";
import { OrderFileError } from "../../import/readers/order-file-error.js";
import { formatRowError } from "../../import/validation/row-error.js";
import { parseBudget } from "../../orders/budget.js";
import { isRedisAway, redisAddress } from "../../redis/outage-reporter.js";
import { importConfirm } from "../confirm-import.js";
import { collect, currencyCode, wholeNumber } from "../option-parsers.js";
import { progressBar } from "../progress.js";
import { action, createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

interface ImportFlags {
  campaign: string;
  dryRun?: boolean;
  skipInvalid?: boolean;
  budget?: string[];
  yes?: boolean;
  hold?: boolean;
  append?: boolean;
  executionMode: "async" | "sync";
  itemsPerOrder?: number;
  templateId?: string;
  map?: string[];
  strictColumns?: boolean;
  delimiter?: string;
  decimalComma?: boolean;
  sheet?: string;
  maxUnzippedMb?: number;
  catalogCheck: boolean;
  balanceCheck: boolean;
  currency?: string;
  errorFile?: string;
  json?: boolean;
}

/** Registers `orders import`. */
export function registerImport(orders: Command): void {
  orders
    .command("import")
    .description(
      "Validate an order file (CSV, TSV or .xlsx) against the catalog snapshot and enqueue its rows.",
    )
    .argument("<file>", "CSV, TSV or .xlsx file with a header row")
    .requiredOption("--campaign <name>", "campaign name (letters, digits, . _ -)")
    .option("--dry-run", "validate and price only; nothing is recorded or enqueued")
    .option(
      "--skip-invalid",
      "enqueue the valid rows; write the invalid ones to an error file to fix and import again",
    )
    .option("--error-file <path>", "where --skip-invalid writes invalid rows (CSV)")
    .option(
      "--budget <amount[:CUR]>",
      "the most the campaign may cost in a currency (repeatable, one per currency); stored on it",
      collect,
    )
    .option("--yes", "import and send without asking")
    .option("--hold", "record the campaign held: nothing is sent until `orders approve`")
    .option("--append", "add this file's new rows to an existing campaign")
    .addOption(
      new Option("--execution-mode <mode>", "async or sync")
        .choices(["async", "sync"])
        .default("async"),
    )
    .option(
      "--items-per-order <n>",
      "rows packed per order (1..200, async only)",
      (value: string) => wholeNumber("--items-per-order", value),
    )
    .option("--template-id <id>", "template for rows without template_id")
    .option("--map <Header=field>", "map a source header to a field (repeatable)", collect)
    .option("--strict-columns", "refuse columns that map to no field instead of ignoring them")
    .option("--delimiter <char>", "field delimiter, e.g. ';'")
    .option(
      "--decimal-comma",
      "face_value uses ',' as its decimal mark (25,50); assumed with --delimiter ';'",
    )
    .option("--no-decimal-comma", "face_value uses '.' even in a ';'-separated file")
    .option("--sheet <name>", "the sheet of an .xlsx workbook to read (default: the first)")
    .option(
      "--max-unzipped-mb <n>",
      "the most an .xlsx workbook may unpack to, in MB (default 200, with a check of how far each part unpacks)",
      (value: string) => wholeNumber("--max-unzipped-mb", value, 1),
    )
    .option("--currency <CUR>", "payment currency (required with --no-catalog-check)")
    .option("--no-catalog-check", "skip the preflight against the catalog snapshot")
    .option("--no-balance-check", "skip the check against the account balance")
    .option("--json", "print one JSON document")
    .action(action((file: string, opts: ImportFlags) => runImport(file, opts)));
}

async function runImport(file: string, opts: ImportFlags): Promise<number> {
  try {
    return await importFile(file, opts);
  } catch (error) {
    // --json promises one document on every exit: a refusal of the whole file included.
    if (opts.json && error instanceof UserError) printJson(refusalJson(opts.campaign, error));
    throw error;
  }
}

/**
 * `orders import --json` when the import stopped before any row was judged (a bad header, a
 * quote never closed, an unreadable file, a bad flag): nothing valid, nothing invalid, and the
 * reason in `errors`, with its line (null when it is not about a line) and column where known.
 */
function refusalJson(campaign: string, error: UserError) {
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

async function importFile(file: string, opts: ImportFlags): Promise<number> {
  const ctx = createContext(opts.json);
  const budgets = (opts.budget ?? []).map(parseBudget);
  const requireApproval = ctx.config.requireApproval;
  const hold = Boolean(opts.hold) || requireApproval;
  const map = opts.map ? parseColumnMap(opts.map) : undefined;
  const currency =
    opts.currency === undefined ? undefined : currencyCode("--currency", opts.currency);
  // Checked before the file is read: without a snapshot, every row needs this one currency.
  if (!opts.catalogCheck && !currency)
    throw new UserError("--no-catalog-check needs --currency CUR: the currency every row pays in");
  const catalog = opts.catalogCheck ? await loadCurrentIndex(ctx.config.dataDir) : undefined;
  if (opts.catalogCheck && !catalog) {
    throw new UserError(
      `no catalog snapshot in ${join(ctx.config.dataDir, "catalog")}: run \`giftjobs catalog sync\` first, or pass --no-catalog-check`,
    );
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const errorFile = resolve(
    opts.errorFile ??
      join(ctx.config.dataDir, "campaigns", opts.campaign, `invalid-rows-${stamp}.csv`),
  );
  const fileBytes = ctx.interactive
    ? await stat(file).then(
        (s) => s.size,
        () => 0,
      )
    : 0;
  // validate: the bar is the share of the file read; enqueue: rows recorded of those to record.
  const bar = progressBar(
    ctx.interactive,
    "{phase} |{bar}| {percentage}% rows {rows} enqueued {enqueued}",
    fileBytes,
  );
  let phase = "validate";
  // Rows recorded so far, and whether Redis answered at the start (for a Redis lost mid-way).
  let recorded = 0;
  let connected = false;
  // Stopped however the import ends, Redis unreachable included: the terminal gets its cursor back.
  try {
    return await withServices(ctx.config, async ({ ledger, client }) => {
      connected = true;
      try {
        const result = await importCampaign(
          {
            file,
            campaign: opts.campaign,
            dryRun: opts.dryRun,
            skipInvalid: opts.skipInvalid,
            errorFile,
            budgets,
            hold,
            append: opts.append,
            confirm: importConfirm({
              yes: opts.yes,
              hold,
              dryRun: opts.dryRun,
              streams: { input: process.stdin, output: process.stderr },
              beforeAsking: () => bar.stop(),
            }),
            executionMode: opts.executionMode,
            itemsPerOrder: opts.itemsPerOrder,
            defaultTemplateId: opts.templateId ?? ctx.config.templateId,
            map,
            header: {
              strictColumns: opts.strictColumns,
              onHeader: (h) => process.stderr.write(headerReportText(h)),
            },
            delimiter: opts.delimiter,
            decimalComma: opts.decimalComma,
            onDecimalComma: (assumed) => {
              if (assumed)
                process.stderr.write(
                  "face_value: ',' read as the decimal mark (a ';'-separated file); --no-decimal-comma to refuse such values\n",
                );
            },
            sheet: opts.sheet,
            maxUnzippedBytes:
              opts.maxUnzippedMb === undefined ? undefined : opts.maxUnzippedMb * 2 ** 20,
            currency,
            balanceCheck: opts.balanceCheck,
            onProgress: (p) => {
              if (p.phase !== phase) {
                phase = p.phase;
                bar.setTotal(p.toEnqueue);
              }
              if (p.phase === "enqueue") recorded = p.enqueued;
              const value = p.phase === "validate" ? Math.min(p.bytes, fileBytes) : p.enqueued;
              bar.update(value, { phase: p.phase, rows: p.rows, enqueued: p.enqueued });
            },
          },
          { ledger, catalog, client, log: ctx.log, dataDir: ctx.config.dataDir },
        );
        bar.stop();
        for (const r of result.budgets_replaced ?? [])
          process.stderr.write(
            `campaign ${result.campaign}: its ${r.currency} budget ${r.from} is replaced by ${r.to}\n`,
          );
        if (requireApproval && !opts.hold && result.state === "held" && !result.dry_run)
          process.stderr.write(
            `GIFTJOBS_REQUIRE_APPROVAL is set: campaign ${result.campaign} is held${opts.yes ? " even with --yes" : ""}; send it with \`giftjobs orders approve --campaign ${result.campaign}\`\n`,
          );
        if (opts.json) printJson(importJson(result));
        else printImportSummary(result);
        return 0;
      } catch (error) {
        bar.stop();
        if (error instanceof ImportDeclined) {
          if (opts.json) printJson(importJson(error.result, error.message));
          process.stderr.write(`giftjobs: ${error.message}\n`);
          return 1;
        }
        if (!(error instanceof ImportRefused)) throw error;
        if (!opts.json) printRefusal(error);
        else {
          // The rows' errors, and the refusal's own reason unless it is those rows.
          printJson(importJson(error.result, error.forRows ? undefined : error.message));
          process.stderr.write(`giftjobs: error: ${error.message}\n`);
        }
        return 2;
      }
    });
  } catch (error) {
    if (!connected || !isRedisAway(error)) throw error;
    bar.stop();
    const line = redisLostLine(ctx.config, recorded);
    // --json promises one document on every exit: what was recorded, and why it stopped.
    if (opts.json)
      printJson({
        ...refusalJson(opts.campaign, new UserError(line)),
        enqueued: recorded,
      });
    process.stderr.write(`${line}\n`);
    return 1;
  } finally {
    bar.stop();
  }
}

/**
 * Redis went away mid-import: what is recorded stays (each batch is recorded whole), and a
 * second run of the same import records only what is missing.
 */
function redisLostLine(config: Config, recorded: number): string {
  return `giftjobs: Redis went away during the import (${redisAddress(config)} stopped answering): ${recorded} rows were recorded; run the same import again to record the rest`;
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
    errors: [...r.errors, ...stopped],
    ...(r.more_errors ? { more_errors: r.more_errors } : {}),
    ...(r.error_file ? { error_file: r.error_file } : {}),
    state: r.state ?? null,
    ...(r.budgets_replaced ? { budgets_replaced: r.budgets_replaced } : {}),
  };
}

const number = (n: number) => n.toLocaleString("en-US");

function printImportSummary(r: ImportResult): void {
  const out = process.stdout;
  out.write(
    `campaign ${r.campaign}${r.dry_run ? " (dry run: nothing recorded or enqueued)" : ""}\n`,
  );
  out.write(`  rows ${number(r.rows)}: ${number(r.valid)} valid, ${number(r.invalid)} invalid\n`);
  if (!r.dry_run) {
    out.write(
      `  ${number(r.enqueued)} new, ${number(r.already_known)} already known; ${number(r.orders)} orders enqueued\n`,
    );
  }
  for (const [currency, t] of Object.entries(r.totals)) {
    out.write(
      `  ${currency}: face value ${t.face_value}, price ${t.price} (${number(t.rows)} rows)\n`,
    );
  }
  if (r.error_file) out.write(`  invalid rows written to ${r.error_file}\n`);
  if (r.state === "held" && !r.dry_run)
    out.write(
      `  held: nothing is sent until \`giftjobs orders approve --campaign ${r.campaign}\`\n`,
    );
}

function printRefusal(error: ImportRefused): void {
  for (const e of error.result.errors) process.stderr.write(`${formatRowError(e)}\n`);
  if (error.result.more_errors)
    process.stderr.write(`... and ${number(error.result.more_errors)} more errors\n`);
  process.stderr.write(`giftjobs: error: ${error.message}\n`);
}
