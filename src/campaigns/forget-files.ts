import { createReadStream, createWriteStream } from "node:fs";
import { readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { parse } from "csv-parse";
import { stringify } from "csv-stringify";
import { fsyncPath } from "../catalog/durable-files.js";
import { UserError } from "../errors/user-error.js";
import {
  ARCHIVE_FILES,
  ARCHIVE_VERSION,
  type ArchiveLine,
  archiveDir,
  describeFile,
  readLedgerFile,
  readManifest,
  verifyArchiveFiles,
  writeManifest,
} from "./archive-files.js";
import {
  FORGET_FIELDS,
  FORGOTTEN,
  forgetInText,
  forgetOrder,
  forgetRow,
} from "./forget-records.js";

/** What a forget did (or, in a dry run, would do) to the files of a campaign's folder. */
export interface FilesForgotten {
  /** Files rewritten without people's data (a report, the archive's files). */
  rewritten: string[];
  /** Files removed: error files (rows never recorded) and temporary files left by a crash. */
  removed: string[];
}

/** `$GIFTJOBS_DATA_DIR/campaigns/NAME`. */
function campaignDir(dataDir: string, campaign: string): string {
  return join(dataDir, "campaigns", campaign);
}

/** An error file of `orders import --skip-invalid` written to its default place. */
const ERROR_FILE = /^invalid-rows-.*\.csv$/;
/** A file being written when a process stopped (`NAME.tmp`, `NAME.tmp-PID`). */
const TEMPORARY = /\.tmp(?:-\d+)?$/;

/**
 * Forgets people in the campaign's folder (docs/architecture/forgetting.md): its report and
 * archive are rewritten, each to a temporary file that is flushed and renamed over the old one,
 * so a crash leaves the old file or the new, never half of one; error files and temporary files
 * are removed. The journal, the paid memory and the tags marker hold hashes and numbers only
 * and stay as they are. `dryRun`: only says what it would do.
 */
export async function forgetCampaignFiles(
  dataDir: string,
  campaign: string,
  options: { dryRun: boolean; forgottenAt: string },
): Promise<FilesForgotten> {
  const dir = campaignDir(dataDir, campaign);
  const done: FilesForgotten = { rewritten: [], removed: [] };
  const names = await namesIn(dir);
  for (const name of names) {
    const path = join(dir, name);
    if (ERROR_FILE.test(name) || TEMPORARY.test(name)) {
      done.removed.push(path);
      if (!options.dryRun) await unlink(path);
    } else if (name === "report.csv") {
      done.rewritten.push(path);
      if (!options.dryRun) await forgetReportFile(path);
    }
  }
  if (names.includes("archive"))
    await forgetArchive(archiveDir(dataDir, campaign), campaign, options, done);
  if (!options.dryRun && done.removed.length > 0) await fsyncPath(dir);
  return done;
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/**
 * The archive's ledger file and report rewritten without people, then its manifest with their
 * new sha256. A crash between leaves files the manifest does not describe: restore and report
 * refuse them until the forget is run again, which rewrites them all (a campaign whose forget
 * began is not checked against its manifest first).
 */
async function forgetArchive(
  dir: string,
  campaign: string,
  options: { dryRun: boolean; forgottenAt: string },
  done: FilesForgotten,
): Promise<void> {
  for (const name of await namesIn(dir)) {
    if (!TEMPORARY.test(name)) continue;
    done.removed.push(join(dir, name));
    if (!options.dryRun) await unlink(join(dir, name));
  }
  const manifest = await readManifest(dir);
  // An archive never finished: the campaign is still whole in Redis; its files are rewritten
  // by the next archive, from the forgotten ledger.
  if (!manifest) return;
  if (manifest.version !== ARCHIVE_VERSION)
    throw new UserError(
      `campaign ${campaign}: its archive is of version ${manifest.version} (giftjobs 0.1), which this giftjobs cannot rewrite; nothing was forgotten in it`,
    );
  const ledgerPath = join(dir, ARCHIVE_FILES.ledger);
  const reportPath = join(dir, ARCHIVE_FILES.report);
  done.rewritten.push(ledgerPath, reportPath, join(dir, ARCHIVE_FILES.manifest));
  if (options.dryRun) return;
  await forgetLedgerFile(ledgerPath, campaign, options.forgottenAt);
  const written = await readLedgerFile(ledgerPath, campaign);
  await forgetReportFile(reportPath);
  await writeManifest(dir, {
    ...manifest,
    files: {
      [ARCHIVE_FILES.report]: await describeFile(reportPath),
      [ARCHIVE_FILES.ledger]: { sha256: written.sha256, bytes: written.bytes },
    },
  });
  await verifyArchiveFiles(dir, (await readManifest(dir))!.files);
}

/** One archive line without people; its meta line records the forget, so a restore keeps it. */
function forgetLine(line: ArchiveLine, forgottenAt: string): ArchiveLine {
  if (line.type === "row") return { ...line, row: forgetRow(line.row) };
  if (line.type === "order") return { ...line, order: forgetOrder(line.order) };
  if (line.type === "meta")
    return {
      ...line,
      meta: {
        ...line.meta,
        [FORGET_FIELDS.started]: line.meta[FORGET_FIELDS.started] ?? forgottenAt,
        [FORGET_FIELDS.done]: line.meta[FORGET_FIELDS.done] ?? forgottenAt,
      },
    };
  return line;
}

/** Rewrites the archive's gzip NDJSON ledger line by line, durably (temporary file, rename). */
async function forgetLedgerFile(path: string, campaign: string, forgottenAt: string) {
  // Checked whole first: a damaged file is named, not rewritten.
  await readLedgerFile(path, campaign);
  const temporary = `${path}.tmp-${process.pid}`;
  async function* lines() {
    let rest = "";
    for await (const chunk of createReadStream(path).pipe(createGunzip())) {
      const parts = (rest + (chunk as Buffer).toString("utf8")).split("\n");
      rest = parts.pop()!;
      for (const text of parts)
        yield `${JSON.stringify(forgetLine(JSON.parse(text) as ArchiveLine, forgottenAt))}\n`;
    }
    if (rest !== "")
      yield `${JSON.stringify(forgetLine(JSON.parse(rest) as ArchiveLine, forgottenAt))}\n`;
  }
  await pipeline(Readable.from(lines()), createGzip(), createWriteStream(temporary));
  await replaceWith(temporary, path);
}

/**
 * Report columns that hold a person (docs/architecture/forgetting.md, "Where people's data
 * lives").
 */
const PERSON_COLUMNS = new Set(["email", "reference", "recipient_reference"]);

/**
 * Rewrites a report CSV: a person's cell (non-empty e-mail, reference) becomes FORGOTTEN, and an
 * e-mail in an error message too; every other cell (money, statuses, ids) stays as it was.
 */
async function forgetReportFile(path: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  let header: string[] | undefined;
  async function* records() {
    for await (const record of createReadStream(path).pipe(parse({ relax_column_count: true }))) {
      const cells = record as string[];
      if (!header) {
        header = cells;
        yield cells;
        continue;
      }
      yield cells.map((cell, i) => forgetCell(header![i] ?? "", cell));
    }
  }
  await pipeline(Readable.from(records()), stringify(), createWriteStream(temporary));
  await replaceWith(temporary, path);
}

function forgetCell(column: string, cell: string): string {
  if (PERSON_COLUMNS.has(column)) return cell === "" ? "" : FORGOTTEN;
  return forgetInText(cell);
}

/** Flushes `temporary`, renames it over `path` and flushes the folder. */
async function replaceWith(temporary: string, path: string): Promise<void> {
  await fsyncPath(temporary);
  await rename(temporary, path);
  await fsyncPath(join(path, ".."));
}
