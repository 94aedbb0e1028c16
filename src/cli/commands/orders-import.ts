import { stat } from "node:fs/promises";
import { currentActor } from "../../audit/actor.js";
import { EntryFirst } from "../../audit/audited.js";
import { sha256OfFile } from "../../catalog/file-snapshot.js";
import type { Config } from "../../config.js";
import { UserError } from "../../errors/user-error.js";
import { grouped } from "../../grouped.js";
import { dailyLimitLine } from "../../import/daily-limit-note.js";
import { FileNotes } from "../../import/header/header-report.js";
import { limitHeapGrowthForImport } from "../../import/heap-growth.js";
import {
  importAuditDraft,
  importPlannedDraft,
  importStoppedDraft,
  saidByPlanned,
} from "../../import/import-audit.js";
import {
  type ImportEnd,
  type PreparedImport,
  prepareImport,
  refusalJson,
  runImportCommand,
} from "../../import/import-command.js";
import type { ImportRefused } from "../../import/import-errors.js";
import { type ImportFlags, namedOf, parseImportCommand } from "../../import/import-flags.js";
import type { ImportResult } from "../../import/import-types.js";
import { pricingText } from "../../import/pricing.js";
import { repeatLine } from "../../import/repeats.js";
import { leftOutText } from "../../import/validation/risky-files.js";
import { formatRowError } from "../../import/validation/row-error.js";
import { parseBudget } from "../../orders/budget.js";
import { plural } from "../../plural.js";
import { openStores, type Stores } from "../../stores/stores.js";
import { appendEntry } from "../audit-trail.js";
import { terminalPrompt } from "../confirm-import.js";
import { progressBar } from "../progress.js";
import { type CommandContext, createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

/** The flags of `orders import` as commander gives them: parsed once, by parseImportCommand. */
type CommandFlags = Omit<ImportFlags, "file">;

/** `orders import FILE`: see docs/commands.md, "Importing". */
export async function runImport(file: string, opts: CommandFlags): Promise<number> {
  limitHeapGrowthForImport();
  const ctx = createContext(opts.json);
  const trail = new ImportEntries(ctx.config, file);
  try {
    return await importFile(file, opts, { ctx, trail });
  } catch (error) {
    // Refused or failed before the import could say how it ended: an entry too.
    if (!opts.dryRun) await trail.stopped(opts, error);
    // --json promises one document on every exit: a refusal of the whole file included.
    if (opts.json && error instanceof UserError) printJson(refusalJson(opts.campaign, error));
    throw error;
  }
}

interface ImportPlanned {
  prepared: PreparedImport;
  plan: ImportResult;
  stores: Stores | undefined;
}

interface ImportEnded {
  prepared: PreparedImport;
  end: ImportEnd;
  stores: Stores | undefined;
}

/**
 * The audit entries of one import (docs/architecture/audit.md, "An entry before its effect"):
 * the plan before anything is recorded, how it ended when the plan does not say it, and an
 * import stopped by an error before either.
 */
class ImportEntries {
  /** The end's entry was written, or tried: an error after it needs no other. */
  private endTried = false;
  /** The file's sha256, read once for all the command's entries (see fileSha256). */
  private hash: Promise<string | undefined> | undefined;
  /** The plan's entry, then a second one only when the import ended otherwise. */
  private readonly first = new EntryFirst<ImportPlanned, ImportEnded>({
    plan: async ({ prepared, plan, stores }) => {
      const draft = importPlannedDraft(await this.entryOf(prepared), plan);
      await appendEntry(this.config, draft, stores);
    },
    shortfall: (planned, { end }) =>
      saidByPlanned(end, planned.plan) ? undefined : `ended otherwise: ${end.kind}`,
    amend: async (_reason, ended) => this.endEntry(ended),
  });

  constructor(
    private readonly config: Config,
    private readonly file: string,
  ) {}

  async planned(prepared: PreparedImport, plan: ImportResult, stores?: Stores) {
    await this.first.before({ prepared, plan, stores });
  }

  async ended(ended: ImportEnded) {
    this.endTried = true;
    if (!(await this.first.end(ended))) await this.endEntry(ended);
  }

  /** How the import ended: its only entry, or the second after its plan's. */
  private async endEntry({ prepared, end, stores }: ImportEnded) {
    const draft = importAuditDraft(await this.entryOf(prepared), end);
    if (draft) await appendEntry(this.config, draft, stores);
  }

  /**
   * The import stopped by an error before its end's entry (before the file was read, or while
   * recording after its plan's): one saying so, if the trail takes it.
   */
  async stopped(command: CommandFlags, error: unknown) {
    if (this.endTried) return;
    // The flags as given: a bad --budget is left out of the entry that says it was refused.
    const budgets = (command.budget ?? []).flatMap((b) => {
      try {
        return [parseBudget(b)];
      } catch {
        return [];
      }
    });
    const named = { ...command, file: this.file, budgets };
    const draft = importStoppedDraft(
      { named, actor: currentActor(), fileSha256: await this.sha256() },
      error,
    );
    // The trail away (PostgreSQL down) is said by the error the command reports already.
    await appendEntry(this.config, draft).catch(() => undefined);
  }

  /** The entry's parts: what the import names, who runs it, the file's sha256. */
  private async entryOf({ command }: PreparedImport) {
    return { named: namedOf(command), actor: currentActor(), fileSha256: await this.sha256() };
  }

  private sha256(): Promise<string | undefined> {
    this.hash ??= fileSha256(this.file);
    return this.hash;
  }
}

/** Above this, a file's sha256 is not read for its entries (see fileSha256). */
const HASHED_UP_TO = 2 ** 30;

/**
 * The sha256 of the import's file for its entries: of a regular file up to 1 GB only. A refused
 * /dev/zero, pipe or 10 GB file of zeros is not read again (docs/architecture/import.md,
 * "Spreadsheets", "Pipes and devices"): the refusal ends the command at once.
 */
async function fileSha256(file: string): Promise<string | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile() || info.size > HASHED_UP_TO) return undefined;
  return sha256OfFile(file).catch(() => undefined);
}

async function importFile(
  file: string,
  opts: CommandFlags,
  { ctx, trail }: { ctx: CommandContext; trail: ImportEntries },
): Promise<number> {
  const command = parseImportCommand({ ...opts, file }, ctx.config);
  // Opened once for the whole import: the catalog's check, then the import's services.
  const stores = await openStores(ctx.config);
  try {
    const prepared = await prepareImport(command, { settings: ctx.config, stores });
    return await runPrepared(prepared, { ctx, trail, stores, json: command.json });
  } finally {
    await stores.close().catch(() => undefined);
  }
}

/** The import with its terminal: the progress bar, the file's notes, and how it ended. */
async function runPrepared(
  prepared: PreparedImport,
  {
    ctx,
    trail,
    stores,
    json,
  }: { ctx: CommandContext; trail: ImportEntries; stores: Stores; json: boolean },
): Promise<number> {
  const file = prepared.command.stages.read.file;
  // What was read and left out of the file: said as it is read, and in --json's `file`.
  const notes = new FileNotes();
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
  // Stopped however the import ends, Redis unreachable included: the terminal gets its cursor back.
  try {
    return await runImportCommand(prepared, {
      withServices: (fn) => withServices(ctx.config, fn, { stores }),
      log: ctx.log,
      ...terminalPrompt({ input: process.stdin, output: process.stderr }, () => bar.stop()),
      onHeader: (h) => process.stderr.write(notes.onHeader(h)),
      onTotalsRow: (t) => process.stderr.write(notes.onTotalsRow(t)),
      onDecimalComma: (assumed) => {
        if (assumed)
          process.stderr.write(
            "face_value: ',' read as the decimal mark (a ';'-separated file); --no-decimal-comma to refuse such values\n",
          );
      },
      onProgress: (p) => {
        if (p.phase !== phase) {
          phase = p.phase;
          bar.setTotal(p.toEnqueue);
        }
        const value = p.phase === "validate" ? Math.min(p.bytes, fileBytes) : p.enqueued;
        bar.update(value, { phase: p.phase, rows: p.rows, enqueued: p.enqueued });
      },
      ended: () => bar.stop(),
      print: (end) => printEnd(withFileNotes(end, notes), json),
      auditPlanned: (plan, open) => trail.planned(prepared, plan, open),
      audit: (end, open) => trail.ended({ prepared, end, stores: open }),
    });
  } finally {
    bar.stop();
  }
}

/**
 * The end with what the file's reading left to say: totals rows past the few told one by one
 * (on stderr, now), and `file` in --json (docs/order-files.md, "Spreadsheets as exported").
 */
function withFileNotes(end: ImportEnd, notes: FileNotes): ImportEnd {
  process.stderr.write(notes.endText());
  const file = notes.json();
  return file === undefined ? end : { ...end, json: Object.assign({}, end.json, { file }) };
}

/** How the import ended, on stdout and stderr. */
function printEnd(end: ImportEnd, json?: boolean): void {
  switch (end.kind) {
    case "imported":
      for (const note of end.notes) process.stderr.write(`${note}\n`);
      if (json) printJson(end.json);
      else printImportSummary(end.result);
      return;
    case "declined":
      if (json) printJson(end.json);
      process.stderr.write(`giftjobs: ${end.message}\n`);
      return;
    case "refused":
      if (!json) printRefusal(end.error);
      else {
        printJson(end.json);
        process.stderr.write(`giftjobs: error: ${end.error.message}\n`);
      }
      return;
    case "redis_lost":
      if (json) printJson(end.json);
      process.stderr.write(`${end.line}\n`);
  }
}

function printImportSummary(r: ImportResult): void {
  const out = process.stdout;
  out.write(
    `campaign ${r.campaign}${r.dry_run ? " (dry run: nothing recorded or enqueued)" : ""}\n`,
  );
  const problems = r.problems ? ` (${grouped(r.problems)} ${plural(r.problems, "problem")})` : "";
  out.write(
    `  rows ${grouped(r.rows)}: ${grouped(r.valid)} valid, ${grouped(r.invalid)} invalid${problems}\n`,
  );
  // Held: recorded, nothing sent (docs/commands.md, "Importing").
  const held = r.state === "held" && !r.dry_run;
  if (!r.dry_run) {
    const orders = held
      ? `${grouped(r.orders)} ${plural(r.orders, "order")} recorded, held: nothing is sent until \`giftjobs orders approve --campaign ${r.campaign}\``
      : `${grouped(r.orders)} ${plural(r.orders, "order")} enqueued`;
    out.write(
      `  ${grouped(r.enqueued)} new, ${grouped(r.already_known)} already known; ${orders}\n`,
    );
  }
  // Rows another campaign paid: left out (--skip-repeats) or paid again (--allow-repeats).
  for (const group of r.repeats ?? [])
    out.write(
      `  ${group.outcome === "skipped" ? "left out" : "paid again"}: ${repeatLine(group)}\n`,
    );
  for (const [currency, t] of Object.entries(r.totals)) {
    out.write(
      `  ${currency}: face value ${t.face_value}, price ${t.price} (${grouped(t.rows)} ${plural(t.rows, "row")})\n`,
    );
  }
  // A dry run says who priced it; an import, which showed it before asking, only when not the
  // service (docs/architecture/import.md, "Prices").
  if (r.priced_by && r.valid > 0 && (r.dry_run || r.priced_by !== "service"))
    out.write(`  ${pricingText({ by: r.priced_by, note: r.pricing_note })}\n`);
  // Said before the question too; here for --yes, --hold and a dry run.
  for (const note of r.daily_limit ?? []) out.write(`  ${dailyLimitLine(note)}\n`);
  if (r.left_out)
    out.write(
      `  report rows left out (${leftOutText(new Map(Object.entries(r.left_out)))}): only failed_final and cancelled rows are sent again\n`,
    );
  if (r.error_file) out.write(`  invalid rows written to ${r.error_file}\n`);
}

function printRefusal(error: ImportRefused): void {
  for (const e of error.result.errors) process.stderr.write(`${formatRowError(e)}\n`);
  if (error.result.more_errors)
    process.stderr.write(`... and ${grouped(error.result.more_errors)} more problems\n`);
  for (const line of error.message.split("\n")) process.stderr.write(`giftjobs: error: ${line}\n`);
}
