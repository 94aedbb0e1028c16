import { join } from "node:path";
import type { Ledger } from "../ledger/ledger.js";
import type { RepeatOf } from "../ledger/types.js";
import type { PaidEntry, PaidLookup } from "../orders/paid-memory.js";
import { ARCHIVE_FILES, archiveDir, readLedgerFile, readManifest } from "./archive-files.js";

/** The default window of the paid memory, in days (GIFTJOBS_REPEAT_WINDOW_DAYS). */
export const REPEAT_WINDOW_DAYS = 90;

/**
 * Statuses of an earlier row that mean nothing was made for it: such a row is no repeat. Every
 * other status counts: queued, in flight, submitted, completed, may exist, and a row whose
 * ledger is gone (lost, or never recorded after its memory line was written).
 */
const NOTHING_MADE = new Set(["failed_final", "cancelled"]);

/** An earlier row a row of this import repeats, with that row's status where it is known. */
export interface EarlierRow extends PaidEntry {
  /** The row's status in its campaign; "unknown" when its ledger no longer has it. */
  status: string;
}

/**
 * Finds, a batch at a time, the earlier rows of other campaigns that a batch's rows repeat:
 * same fingerprint, in the window, and not ended with nothing made (a status the earlier
 * campaign's ledger tells, else its archive; a row neither knows counts).
 */
export class RepeatFinder {
  /** Archived campaigns' row statuses by identity, read once per campaign when first needed. */
  private readonly archived = new Map<string, Map<string, string> | undefined>();

  /** The paid memory's entries; none once released. */
  private lookup: PaidLookup | undefined;

  constructor(
    lookup: PaidLookup,
    private readonly ledger: Ledger,
    private readonly dataDir: string | undefined,
  ) {
    this.lookup = lookup;
  }

  /**
   * Lets go of the entries once no row is left to look up, or the work ends otherwise: a file
   * lookup holds a temporary file of every entry of the window (about 100 bytes a row) and a
   * table of them in memory (16 MB for a million), which pass 2 of an import has no use for
   * (docs/architecture/repeats.md, "The check"). Once released it finds nothing; again, it does
   * nothing.
   */
  async release(): Promise<void> {
    const lookup = this.lookup;
    this.lookup = undefined;
    this.archived.clear();
    await lookup?.close();
  }

  /** For each fingerprint, the earlier rows it repeats (none for an undefined one). */
  async find(fingerprints: readonly (string | undefined)[]): Promise<EarlierRow[][]> {
    if (!this.lookup) throw new Error("the repeats lookup was released: no row is left to find");
    const matches = await this.lookup.find(fingerprints);
    const byCampaign = new Map<string, PaidEntry[]>();
    for (const list of matches)
      for (const entry of list) {
        const group = byCampaign.get(entry.campaign) ?? [];
        group.push(entry);
        byCampaign.set(entry.campaign, group);
      }
    const statuses = new Map<PaidEntry, string>();
    for (const [campaign, entries] of byCampaign)
      for (const [i, status] of (await this.statuses(campaign, entries)).entries())
        statuses.set(entries[i]!, status);
    // Most rows repeat nothing: theirs is a new empty list, not a map and a filter of one.
    return matches.map((list) => {
      const rows: EarlierRow[] = [];
      for (const entry of list) {
        const status = statuses.get(entry) ?? "unknown";
        if (!NOTHING_MADE.has(status)) rows.push(earlierRow(entry, status));
      }
      return rows;
    });
  }

  /** The statuses of a campaign's rows: its ledger's, else its archive's, else "unknown". */
  private async statuses(campaign: string, entries: PaidEntry[]): Promise<string[]> {
    const known = await this.ledger.orders.rowStatuses(
      campaign,
      entries.map((e) => e.identity),
    );
    const result: string[] = [];
    for (const [i, status] of known.entries())
      result.push(
        status ?? (await this.archivedStatuses(campaign))?.get(entries[i]!.identity) ?? "unknown",
      );
    return result;
  }

  private async archivedStatuses(campaign: string): Promise<Map<string, string> | undefined> {
    if (this.archived.has(campaign)) return this.archived.get(campaign);
    let statuses: Map<string, string> | undefined;
    if (this.dataDir !== undefined) {
      const dir = archiveDir(this.dataDir, campaign);
      if (await readManifest(dir)) {
        statuses = new Map();
        const found = statuses;
        await readLedgerFile(join(dir, ARCHIVE_FILES.ledger), campaign, (line) => {
          if (line.type === "row") found.set(line.identity, line.status);
        });
      }
    }
    this.archived.set(campaign, statuses);
    return statuses;
  }
}

/**
 * An entry with its status, each field named rather than spread: a repeat of a million rows
 * makes one a row, and the spread was 0.6 s of its first pass's CPU (profile of the import bench).
 */
function earlierRow(entry: PaidEntry, status: string): EarlierRow {
  const { campaign, fingerprint, identity, line, currency, face, at } = entry;
  return { campaign, fingerprint, identity, line, currency, face, at, status };
}

/**
 * The earlier rows a recorded repeat keeps on its ledger row: a row of a daily bonus may repeat
 * ninety, and each costs Redis bytes until the campaign is archived.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const REPEAT_OF_KEPT = 5;

/**
 * What a row recorded with --allow-repeats keeps of the earlier rows it pays again
 * (docs/architecture/repeats.md, "The check"): the latest REPEAT_OF_KEPT, oldest first, and how
 * many more there were.
 */
export function repeatOf(earlier: readonly EarlierRow[]): RepeatOf {
  const sorted = [...earlier].sort(
    (a, b) =>
      a.at - b.at ||
      (a.campaign < b.campaign ? -1 : a.campaign > b.campaign ? 1 : 0) ||
      a.line - b.line,
  );
  const rows = sorted.slice(-REPEAT_OF_KEPT).map(({ campaign, line }) => ({ campaign, line }));
  const more = sorted.length - rows.length;
  return more > 0 ? { rows, more } : { rows };
}
