import { stat, writeFile } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { apiKeyFingerprint } from "../../api/client.js";
import { writeCampaignReport } from "../../campaigns/archive.js";
import { doneRows, formatDuration, rateAndEta } from "../../campaigns/progress.js";
import { retryCampaign } from "../../campaigns/retry.js";
import {
  anyFailed,
  type CampaignStatus,
  campaignStatus,
  pendingRows,
} from "../../campaigns/status.js";
import { waitForCampaign } from "../../campaigns/wait-for-campaign.js";
import { loadCurrentIndex } from "../../catalog/current-snapshot.js";
import type { Config } from "../../config.js";
import { UserError } from "../../errors/user-error.js";
import { parseColumnMap } from "../../import/header/column-map.js";
import { headerReportText } from "../../import/header/header-report.js";
import { importCampaign } from "../../import/import-campaign.js";
import { ImportDeclined, ImportRefused } from "../../import/import-errors.js";
import type { ImportResult } from "../../import/import-types.js";
import { templateCsv, writeTemplateXlsx } from "../../import/order-template.js";
import { OrderFileError } from "../../import/readers/order-file-error.js";
import { formatRowError } from "../../import/validation/row-error.js";
import type { Ledger } from "../../ledger/ledger.js";
import { parseBudget } from "../../orders/budget.js";
import type { RedisConnection } from "../../redis/connection.js";
import { isRedisAway, OutageReporter, redisAddress } from "../../redis/outage-reporter.js";
import { importConfirm } from "../confirm-import.js";
import { collect, currencyCode, wholeNumber } from "../option-parsers.js";
import { progressBar } from "../progress.js";
import { action, createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";
import { registerCampaignCommands, requireCampaign } from "./campaigns.js";

/** Registers `orders import|status|report|retry`, and the lifecycle commands of campaigns.ts. */
export function register(program: Command): void {
  const orders = program
    .command("orders")
    .description(
      "Order campaigns: import a CSV or .xlsx, follow, report, retry; a template to fill.",
    );
  registerImport(orders);
  registerTemplate(orders);
  registerStatus(orders);
  registerReport(orders);
  registerRetry(orders);
  registerCampaignCommands(orders);
}

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

function registerImport(orders: Command): void {
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

function registerTemplate(orders: Command): void {
  orders
    .command("template")
    .description(
      "Write a ready-to-fill order file: the header and an example row from the catalog snapshot.",
    )
    .option(
      "--out <file>",
      "FILE.csv, or FILE.xlsx with a Products sheet of the snapshot's orderable products (default: CSV on stdout)",
    )
    .option("--country <CC>", "only products redeemable in this country")
    .option("--orderable", "list only the products an import accepts now (LIVE)")
    .action(
      action(async (opts: { out?: string; country?: string; orderable?: boolean }) => {
        const ctx = createContext();
        const ext = opts.out ? extname(opts.out).toLowerCase() : ".csv";
        if (ext !== ".csv" && ext !== ".xlsx")
          throw new UserError(`--out ${opts.out}: name a .csv or .xlsx file`);
        const index = await loadCurrentIndex(ctx.config.dataDir);
        if (!index)
          process.stderr.write(
            `note: no catalog snapshot in ${join(ctx.config.dataDir, "catalog")}: the example row's product code is a placeholder (run \`giftjobs catalog sync\`)\n`,
          );
        const options = { country: opts.country, orderable: opts.orderable };
        if (!opts.out) {
          process.stdout.write(templateCsv(index, options));
          return 0;
        }
        const out = resolve(opts.out);
        if (ext === ".xlsx") await writeTemplateXlsx(out, index, options);
        else await writeFile(out, templateCsv(index, options), "utf8");
        process.stderr.write(`template written to ${out}\n`);
        return 0;
      }),
    );
}

function registerStatus(orders: Command): void {
  orders
    .command("status")
    .description("Rows of a campaign by status; --wait blocks until nothing is pending.")
    .requiredOption("--campaign <name>", "campaign name")
    .option("--wait", "wait until nothing is queued, in flight or submitted")
    .option("--timeout <seconds>", "give up waiting after this long (exit 124)", (value: string) =>
      wholeNumber("--timeout", value),
    )
    .option("--json", "print one JSON document")
    .action(
      action(
        async (opts: { campaign: string; wait?: boolean; timeout?: number; json?: boolean }) => {
          const ctx = createContext(opts.json);
          return withServices(ctx.config, async ({ ledger, redis }) => {
            await requireCampaign(ledger, opts.campaign);
            let status = await campaignStatus(ledger, opts.campaign);
            if (opts.wait) {
              const waited = await waitWithBar(
                ledger,
                opts.campaign,
                opts.timeout,
                ctx.interactive,
                outageReporterOf(redis, ctx.config),
              );
              status = waited.status;
              if (waited.timedOut) {
                // One line on stderr; with --json the status document is still the result.
                if (opts.json) printJson(status);
                process.stderr.write(
                  `giftjobs: timed out after ${opts.timeout} s waiting for campaign ${opts.campaign}: ${status.total - pendingRows(status)} of ${status.total} rows done\n`,
                );
                return 124;
              }
            }
            report(status, opts.json);
            if (!opts.wait) return 0;
            return anyFailed(status) ? 1 : 0;
          });
        },
      ),
    );
}

function report(status: CampaignStatus, json?: boolean): void {
  if (json) {
    printJson(status);
    return;
  }
  const s = status;
  process.stdout.write(
    `campaign ${s.campaign} (${s.state}): ${number(s.total)} rows\n` +
      `  queued ${number(s.queued)}, in flight ${number(s.in_flight)}, submitted ${number(s.submitted)}\n` +
      (s.scheduled
        ? `  scheduled ${number(s.scheduled)} of the queued rows, the next at ${s.next_send_at}\n`
        : "") +
      `  completed ${number(s.completed)}, failed_final ${number(s.failed_final)}, failed_uncertain ${number(s.failed_uncertain)}, cancelled ${number(s.cancelled)}\n` +
      (s.replayed
        ? `  WARNING: ${number(s.replayed)} rows were replayed: the service answered with orders made before this campaign was imported\n`
        : "") +
      (s.paused ? `  PAUSED since ${s.paused.since}: ${s.paused.reason}\n` : ""),
  );
}

/** Waits for the campaign with a bar on a terminal. */
async function waitWithBar(
  ledger: Ledger,
  campaign: string,
  timeoutSeconds: number | undefined,
  interactive: boolean,
  outage: OutageReporter,
): Promise<{ status: CampaignStatus; timedOut: boolean }> {
  const bar = progressBar(
    interactive,
    "orders |{bar}| {value}/{total} rows done, {rate} rows/s, ETA {eta_text} {paused}",
  );
  // The rate is of the rows done while this command watched, not since the import.
  let first: { at: number; done: number } | undefined;
  try {
    return await waitForCampaign(ledger, campaign, {
      timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      outage,
      onStatus: (status) => {
        const done = doneRows(status);
        first ??= { at: Date.now(), done };
        const { rate, etaSeconds } = rateAndEta(
          done - first.done,
          Date.now() - first.at,
          status.total - done,
        );
        bar.setTotal(status.total);
        bar.update(done, {
          rate: rate.toFixed(1),
          eta_text: formatDuration(etaSeconds),
          paused: status.paused ? "(PAUSED)" : "",
        });
      },
    });
  } finally {
    bar.stop();
    outage.close();
  }
}

/** Redis away while waiting: one line every few seconds, and the wait goes on. */
function outageReporterOf(redis: RedisConnection, config: Config): OutageReporter {
  return new OutageReporter(redisAddress(config)).watch(redis);
}

function registerReport(orders: Command): void {
  orders
    .command("report")
    .description("Write a CSV with one line per row: status, order and item ids, errors.")
    .requiredOption("--campaign <name>", "campaign name")
    .option("--out <file>", "output file (default: DATA_DIR/campaigns/NAME/report.csv)")
    .option("--json", "print one JSON document")
    .action(
      action(async (opts: { campaign: string; out?: string; json?: boolean }) => {
        const ctx = createContext(opts.json);
        const out = resolve(
          opts.out ?? join(ctx.config.dataDir, "campaigns", opts.campaign, "report.csv"),
        );
        return withServices(ctx.config, async ({ ledger }) => {
          await requireCampaign(ledger, opts.campaign);
          // An archived campaign's report is the one written when it was archived.
          const rows = await writeCampaignReport(ledger, opts.campaign, out);
          if (opts.json) printJson({ campaign: opts.campaign, rows, report: out });
          else process.stdout.write(`${number(rows)} rows written to ${out}\n`);
          return 0;
        });
      }),
    );
}

function registerRetry(orders: Command): void {
  orders
    .command("retry")
    .description(
      "Re-queue failed_uncertain rows under their SAME keys; --new-key moves failed_final rows to a new generation.",
    )
    .requiredOption("--campaign <name>", "campaign name")
    .option(
      "--new-key",
      "retry failed_final rows under the next generation's key (nothing was made for them)",
    )
    .option(
      "--force",
      "with --new-key, also failed_uncertain rows: an order may exist for them, so this could pay twice; without, send failed_uncertain rows under their same key even after an unclear attempt under another API key",
    )
    .option("--json", "print one JSON document")
    .action(
      action(
        async (opts: { campaign: string; newKey?: boolean; force?: boolean; json?: boolean }) => {
          const ctx = createContext(opts.json);
          return withServices(ctx.config, async ({ ledger }) => {
            await requireCampaign(ledger, opts.campaign);
            if (opts.newKey && !opts.force) {
              const status = await campaignStatus(ledger, opts.campaign);
              if (status.failed_uncertain > 0) {
                process.stderr.write(
                  `note: ${status.failed_uncertain} failed_uncertain rows are left alone: an order may exist for them. ` +
                    "Retry them with their same key (`orders retry` without --new-key); --new-key --force could pay twice.\n",
                );
              }
            }
            if (opts.force && opts.newKey)
              ctx.log.warn(
                { campaign: opts.campaign },
                "--force: failed_uncertain rows get new keys; this could pay twice",
              );
            const result = await retryCampaign(ledger, opts.campaign, {
              newKey: opts.newKey,
              force: opts.force,
              dataDir: ctx.config.dataDir,
              apiKey: apiKeyFingerprint(ctx.config.apiKey),
            });
            if (result.unclear > 0)
              process.stderr.write(
                `note: ${number(result.unclear)} orders keep their key: an attempt under it ended unclear, so an order may exist. ` +
                  "Retry them with their same key; --new-key --force only once you have checked the service's orders.\n",
              );
            if (opts.json) printJson({ campaign: opts.campaign, ...result });
            else
              process.stdout.write(
                `${number(result.rows)} rows in ${number(result.orders)} orders re-queued (${result.mode})\n`,
              );
            return 0;
          });
        },
      ),
    );
}
