import { copyFile, mkdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DamagedFileError } from "../catalog/damaged-file-error.js";
import { fsyncPath } from "../catalog/durable-files.js";
import { RunError } from "../errors/run-error.js";
import { UserError } from "../errors/user-error.js";
import { countsOf } from "../ledger/campaigns.js";
import type { CampaignShape, Ledger, LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import type { CampaignMeta, StoredState } from "../ledger/types.js";
import { plural } from "../plural.js";
import {
  ARCHIVE_FILES,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  type ArchiveLine,
  type ArchiveManifest,
  archiveDir,
  describeFile,
  readLedgerFile,
  readManifest,
  verifyArchiveFiles,
  writeLedgerFile,
  writeManifest,
} from "./archive-files.js";
import { writeReport } from "./report.js";
import { type CampaignState, campaignState, storedState } from "./state.js";

/** `orders archive --json`. */
export interface ArchiveResult {
  campaign: string;
  /** `already`: the campaign was archived before (its files checked again). */
  outcome: "archived" | "already";
  archive: string;
  archived_at: string;
  /** The stored state before the archive; a restore gives it back. */
  state_before: StoredState;
  rows: number;
  orders: number;
  files: ArchiveManifest["files"];
}

/** `orders restore --json`. */
export interface RestoreResult {
  campaign: string;
  archive: string;
  state: CampaignState;
  rows: number;
  orders: number;
}

const BATCH = 500;

/**
 * `orders archive` (docs/architecture/campaigns.md, "Archive"): writes a done campaign (or a
 * cancelled one with nothing left to send or follow) to files under `archiveDir` (its report, a
 * compact ledger, a manifest with their sha256, each written durably), reads the ledger file back,
 * and only then removes the campaign's Redis keys but a tombstone, in one script that first checks
 * the campaign did not change meanwhile. A crash before that script leaves the campaign as it
 * was; the script itself is atomic. On a campaign archived already, checks the files against
 * the manifest and removes data keys left behind, if any.
 */
export async function archiveCampaign(
  ledger: Ledger,
  campaign: string,
  options: { dataDir: string },
): Promise<ArchiveResult> {
  await requireKnown(ledger, campaign);
  const shape = await ledger.archive.shape(campaign);
  const meta = shape.meta as CampaignMeta;
  if (storedState(meta) === "archived") return archivedAgain(ledger, campaign, meta);
  await requireArchivable(ledger, campaign, shape);

  const dir = archiveDir(options.dataDir, campaign);
  await mkdir(dir, { recursive: true });
  await fsyncPath(dirname(dir));
  const reportRows = await writeReport(ledger, campaign, join(dir, ARCHIVE_FILES.report), {
    durable: true,
  });
  const ledgerPath = join(dir, ARCHIVE_FILES.ledger);
  await writeLedgerFile(ledgerPath, exportLines(ledger, campaign, shape));
  // Read back what is on disk before anything leaves Redis: the sha256 is of those bytes.
  const written = await readLedgerFile(ledgerPath, campaign);
  if (written.rows !== shape.rows || written.orders !== shape.orders || reportRows !== shape.rows)
    throw new RunError(
      `campaign ${campaign} changed while it was being archived (rows or orders added or removed); nothing was removed from Redis: run orders archive again`,
    );
  const archivedAt = new Date().toISOString();
  const manifest: ArchiveManifest = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    campaign,
    archived_at: archivedAt,
    state: storedState(meta),
    rows: written.rows,
    orders: written.orders,
    files: {
      [ARCHIVE_FILES.report]: await describeFile(join(dir, ARCHIVE_FILES.report)),
      [ARCHIVE_FILES.ledger]: { sha256: written.sha256, bytes: written.bytes },
    },
  };
  await writeManifest(dir, manifest);

  const removed = await ledger.archive.removeCampaignData(campaign, shape, {
    archivedAt,
    archivePath: dir,
  });
  if (removed.outcome === "changed")
    throw new RunError(
      `campaign ${campaign} changed while it was being archived (${removed.why}); nothing was removed from Redis: run orders archive again`,
    );
  if (removed.outcome === "already")
    return archivedAgain(ledger, campaign, await ledger.campaigns.meta(campaign));
  return resultOf(campaign, "archived", dir, manifest);
}

/** Archive run on an archived campaign: the files must still match their manifest. */
async function archivedAgain(
  ledger: Ledger,
  campaign: string,
  meta: CampaignMeta,
): Promise<ArchiveResult> {
  const { dir, manifest } = await openArchive(campaign, meta);
  await verifyArchiveFiles(dir, manifest.files);
  // On an archived campaign the script only drops data keys left behind; no shape is compared.
  await ledger.archive.removeCampaignData(campaign, emptyShape(), {
    archivedAt: meta.archived_at ?? manifest.archived_at,
    archivePath: dir,
  });
  return resultOf(campaign, "already", dir, manifest);
}

function resultOf(
  campaign: string,
  outcome: ArchiveResult["outcome"],
  dir: string,
  manifest: ArchiveManifest,
): ArchiveResult {
  return {
    campaign,
    outcome,
    archive: dir,
    archived_at: manifest.archived_at,
    state_before: manifest.state,
    rows: manifest.rows,
    orders: manifest.orders,
    files: manifest.files,
  };
}

/** A done campaign, or a cancelled one with nothing queued, in flight or submitted. */
async function requireArchivable(
  ledger: Ledger,
  campaign: string,
  shape: CampaignShape,
): Promise<void> {
  const meta = shape.meta as CampaignMeta;
  const counts = countsOf(shape.counts);
  const state = campaignState(meta, counts);
  const pending = counts.queued + counts.in_flight + counts.submitted;
  const cancelledAndOver = storedState(meta) === "cancelled" && pending === 0;
  if (state !== "done" && !cancelledAndOver)
    throw new UserError(
      `campaign ${campaign} is ${state} (${pending} ${plural(pending, "row")} queued, in flight or submitted): only a done campaign, or a cancelled one with nothing queued, in flight or submitted, can be archived`,
    );
  const followed = await ledger.follows.countOf(campaign);
  if (followed > 0)
    throw new UserError(
      `campaign ${campaign} has ${followed} ${plural(followed, "order")} still followed (${ledger.follows.key()}): it cannot be archived until they end`,
    );
}

/** The compact ledger's lines, from Redis (see ArchiveLine). */
async function* exportLines(
  ledger: Ledger,
  campaign: string,
  shape: CampaignShape,
): AsyncGenerator<ArchiveLine> {
  yield { type: "campaign", format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, campaign };
  yield { type: "meta", meta: shape.meta };
  yield { type: "counts", counts: shape.counts };
  let rows = 0;
  let orders = 0;
  for await (const batch of batches(ledger.orders.rows(campaign))) {
    const numbers = [...new Set(batch.map(([, row]) => row.order))];
    const found = await ledger.orders.getOrders(campaign, numbers);
    const status = new Map(numbers.map((n, i) => [n, found[i]?.status ?? "unknown"]));
    for (const [identity, row] of batch) {
      rows += 1;
      yield { type: "row", identity, status: status.get(row.order)!, row };
    }
  }
  for await (const [number, order] of ledger.orders.all(campaign)) {
    orders += 1;
    yield { type: "order", number, order };
  }
  yield { type: "end", rows, orders };
}

async function* batches<T>(source: AsyncIterable<T>, size = BATCH): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of source) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * `orders restore`: reads an archived campaign's compact ledger back into Redis, after checking
 * its files against the manifest's sha256. Rows, orders and request bodies are written while
 * the tombstone still says archived (nothing sends or imports for an archived campaign); the
 * last script gives the campaign its meta and counts back, with the state it had before. A
 * restore that stops half way leaves the campaign archived; running it again starts over.
 */
export async function restoreCampaign(ledger: Ledger, campaign: string): Promise<RestoreResult> {
  await requireKnown(ledger, campaign);
  const tombstone = await ledger.campaigns.meta(campaign);
  const state = storedState(tombstone);
  if (state !== "archived" || !tombstone.archived_at)
    throw new UserError(
      `campaign ${campaign} is ${state}: only an archived campaign can be restored`,
    );
  const { dir, manifest } = await openArchive(campaign, tombstone);
  await verifyArchiveFiles(dir, manifest.files);
  if (!(await ledger.archive.clearArchivedData(campaign)))
    throw new UserError(`campaign ${campaign} is no longer archived: nothing was restored`);

  const path = join(dir, ARCHIVE_FILES.ledger);
  let meta: Record<string, string> | undefined;
  let counts: Record<string, string> | undefined;
  const pending = {
    rows: [] as [string, LedgerRow][],
    orders: [] as [number, LedgerOrder][],
  };
  const flush = async () => {
    await ledger.archive.restoreEntries(campaign, pending);
    pending.rows = [];
    pending.orders = [];
  };
  const read = await readLedgerFile(path, campaign, async (line) => {
    if (line.type === "meta") meta = line.meta;
    else if (line.type === "counts") counts = line.counts;
    else if (line.type === "row") pending.rows.push([line.identity, line.row]);
    else if (line.type === "order") pending.orders.push([line.number, line.order]);
    if (pending.rows.length + pending.orders.length >= BATCH) await flush();
  }).catch(async (error: unknown) => {
    await ledger.archive.clearArchivedData(campaign);
    throw error;
  });
  await flush();
  const expected = manifest.files[ARCHIVE_FILES.ledger];
  if (read.sha256 !== expected.sha256 || !meta || !counts) {
    await ledger.archive.clearArchivedData(campaign);
    throw new DamagedFileError(
      path,
      undefined,
      !meta || !counts
        ? "it has no meta or counts line"
        : `changed while it was being restored (sha256 differs from ${ARCHIVE_FILES.manifest})`,
    );
  }
  const done = await ledger.archive.finishRestore({
    campaign,
    archivedAt: tombstone.archived_at,
    meta,
    counts,
    written: read,
  });
  if (!done.restored) throw new RunError(`campaign ${campaign} was not restored: ${done.why}`);
  return {
    campaign,
    archive: dir,
    state: campaignState(meta as CampaignMeta, countsOf(counts)),
    rows: read.rows,
    orders: read.orders,
  };
}

/**
 * `orders report`: the report from the ledger, or for an archived campaign the report written
 * at archive time (checked against its sha256), copied to `out` atomically. Returns its rows.
 */
export async function writeCampaignReport(
  ledger: Ledger,
  campaign: string,
  out: string,
): Promise<number> {
  const meta = await ledger.campaigns.meta(campaign);
  if (storedState(meta) !== "archived") return writeReport(ledger, campaign, out);
  const { dir, manifest } = await openArchive(campaign, meta);
  const source = join(dir, ARCHIVE_FILES.report);
  await verifyArchiveFiles(dir, { [ARCHIVE_FILES.report]: manifest.files[ARCHIVE_FILES.report] });
  await mkdir(dirname(out), { recursive: true });
  const temporary = `${out}.tmp-${process.pid}`;
  await copyFile(source, temporary);
  await rename(temporary, out);
  return manifest.rows;
}

/** The archive a tombstone points at, with its manifest (which must be there). */
async function openArchive(
  campaign: string,
  meta: CampaignMeta,
): Promise<{ dir: string; manifest: ArchiveManifest }> {
  const dir = meta.archive_path;
  if (!dir)
    throw new RunError(`campaign ${campaign} is archived but its tombstone names no archive`);
  const manifest = await readManifest(dir);
  const path = join(dir, ARCHIVE_FILES.manifest);
  if (!manifest) throw new DamagedFileError(path, undefined, "missing: the archive is not there");
  if (manifest.campaign !== campaign)
    throw new DamagedFileError(path, undefined, `the archive of campaign ${manifest.campaign}`);
  return { dir, manifest };
}

async function requireKnown(ledger: Ledger, campaign: string): Promise<void> {
  if (!(await ledger.campaigns.exists(campaign)))
    throw new UserError(`--campaign ${campaign}: no such campaign`);
}

function emptyShape(): CampaignShape {
  return { meta: {}, counts: {}, rows: 0, orders: 0 };
}
