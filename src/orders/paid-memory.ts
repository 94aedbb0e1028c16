import { mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { parseFileJson } from "../catalog/damaged-file-error.js";
import { LockLease, withFileLock } from "../catalog/file-lock.js";
import { OrderJournalWriter } from "./journal.js";
import { type Dated, memoryLines, pruneFile, tallyBefore } from "./paid-files.js";
import { type PaidEntry, PaidIndex, type PaidRecord } from "./paid-index.js";

export type { PaidEntry };

/** A row about to be recorded: a PaidEntry but for its campaign and time, which the store adds. */
export type NewPaidEntry = Omit<PaidEntry, "campaign" | "at">;

/** A file an import recorded rows from: its bytes' sha256 (hex), when, and how many rows. */
export interface ImportedFile {
  campaign: string;
  sha256: string;
  at: number;
  rows: number;
}

/** Entries and imported-file records a prune removed, or (countBefore) would remove. */
export interface PaidPruned {
  entries: number;
  imports: number;
}

/** Where an import puts the rows it records, a batch at a time, until it is closed. */
export interface PaidAppender {
  /** Durable (flushed, or committed) when it returns: before the batch is recorded in Redis. */
  append(entries: readonly NewPaidEntry[]): Promise<void>;
  close(): Promise<void>;
}

/** The other campaigns' rows an import is checked against. */
export interface PaidLookup {
  /** For each fingerprint (undefined: a row naming nobody), the entries that share it. */
  find(fingerprints: readonly (string | undefined)[]): Promise<PaidEntry[][]>;
  /** Lets go of what it holds (a file lookup's file); it answers nothing after. */
  close(): Promise<void>;
}

/**
 * The memory of who was paid what, across campaigns (docs/architecture/repeats.md): kept beside
 * the order journal and as durable, in files under the data dir or in PostgreSQL
 * (src/db/paid-memory.ts). Redis holds none of it, so a lost ledger, an archived campaign and a
 * restored one still count.
 */
export interface PaidMemory {
  appender(campaign: string): PaidAppender;
  /** Records that `campaign` took rows from a file whose bytes hash to `sha256`. */
  recordFile(campaign: string, sha256: string, rows: number): Promise<void>;
  /** Entries of every campaign but `campaign` recorded at `since` (ms) or later. */
  lookup(campaign: string, since: number): Promise<PaidLookup>;
  /** Imports of a file with these bytes into campaigns other than `campaign`, oldest first. */
  filesLike(sha256: string, campaign: string, since: number): Promise<ImportedFile[]>;
  /** Every campaign the memory knows of (a campaign whose ledger was lost among them). */
  campaigns(): Promise<string[]>;
  /**
   * Removes the entries and imported-file records recorded before `before` (ms): the nightly
   * job's, with GIFTJOBS_REPEAT_WINDOW_DAYS ago, since no lookup reads them any more
   * (docs/architecture/repeats.md, "How long it is kept").
   */
  prune(before: number): Promise<PaidPruned>;
  /** What prune(before) would remove, changing nothing (doctor's `paid-memory` check). */
  countBefore(before: number): Promise<PaidPruned>;
}

/** `paid.ndjson` line: when, and the rows [fingerprint, identity, line, currency, face]. */
interface PaidLine extends Dated {
  r: PaidRecord[];
}

/** `imports.ndjson` line. */
interface ImportLine extends Dated {
  sha256: string;
  rows: number;
}

type MemoryFile = "paid.ndjson" | "imports.ndjson";

/** Bytes an entry takes in paid.ndjson, about: how many entries a file of some size holds. */
const PAID_LINE_BYTES = 110;

/** What a line of each file counts for in PaidPruned: its rows, or one imported file. */
const WEIGHTS = {
  "paid.ndjson": { field: "entries", weigh: (line: PaidLine) => line.r.length },
  "imports.ndjson": { field: "imports", weigh: () => 1 },
} as const;

/** The paid memory's lock as its messages name it. */
const LOCK_NAME = "the paid memory's lock";

/**
 * The memory as files: `campaigns/NAME/paid.ndjson` and `campaigns/NAME/imports.ndjson` under the
 * data dir, beside the campaign's order journal; a line per batch, flushed before the batch is
 * recorded. A lookup reads the other campaigns' files once into a temporary file it answers from
 * (PaidIndex: about 16 bytes per remembered row in memory, outside the heap). Each append, and a
 * prune's rewrite, holds the campaign's lock file `paid-memory.lock`: imports take no lock of a
 * campaign (two may record into one at once), so a prune renaming a file over the one an import
 * holds open would lose its next batch.
 */
export class FilePaidMemory implements PaidMemory {
  constructor(readonly dataDir: string) {}

  private path(campaign: string, file: MemoryFile): string {
    return join(this.dataDir, "campaigns", campaign, file);
  }

  /** The campaign's lock file, beside its memory: a prune's and an import's appends take it. */
  private lockPath(campaign: string): string {
    return join(this.dataDir, "campaigns", campaign, "paid-memory.lock");
  }

  /** Runs `fn` holding the campaign's lock (made with its folder when new). */
  private async locked<T>(campaign: string, fn: () => Promise<T>): Promise<T> {
    const path = this.lockPath(campaign);
    await mkdir(dirname(path), { recursive: true });
    return withFileLock(path, LOCK_NAME, fn);
  }

  /**
   * An import's appends hold the campaign's lock as a lease (LockLease): taken once for a run of
   * batches, not once a batch, and given back within two seconds for a prune waiting on it.
   */
  appender(campaign: string): PaidAppender {
    const writer = new OrderJournalWriter(this.path(campaign, "paid.ndjson"));
    // Each time the lock is taken: the file held open since the last batch may have been pruned
    // away while the lock was given back.
    const lease = new LockLease(this.lockPath(campaign), LOCK_NAME, () => writer.closeIfReplaced());
    return {
      append: async (entries) => {
        if (entries.length === 0) return;
        const r = entries.map((e) => [e.fingerprint, e.identity, e.line, e.currency, e.face]);
        const text = `${JSON.stringify({ t: Date.now(), r })}\n`;
        await lease.run(() => writer.appendText(text));
      },
      close: async () => {
        try {
          await lease.close();
        } finally {
          await writer.close();
        }
      },
    };
  }

  async recordFile(campaign: string, sha256: string, rows: number): Promise<void> {
    const writer = new OrderJournalWriter(this.path(campaign, "imports.ndjson"));
    const text = `${JSON.stringify({ t: Date.now(), sha256, rows })}\n`;
    try {
      await this.locked(campaign, () => writer.appendText(text));
    } finally {
      await writer.close();
    }
  }

  async lookup(campaign: string, since: number): Promise<PaidLookup> {
    const others = (await this.campaigns()).filter((other) => other !== campaign);
    const bytes = await this.bytes(others);
    // No other campaign remembers a row (a first campaign): no file to make for none.
    if (bytes === 0) return { find: async (fps) => fps.map(() => []), close: async () => {} };
    const index = await PaidIndex.create(bytes / PAID_LINE_BYTES);
    try {
      for (const other of others) {
        for await (const line of this.lines<PaidLine>(this.path(other, "paid.ndjson"))) {
          if (line.t < since) continue;
          for (const record of line.r) index.add(other, line.t, record);
        }
      }
    } catch (error) {
      await index.close();
      throw error;
    }
    return { find: async (fingerprints) => index.find(fingerprints), close: () => index.close() };
  }

  /** The size of the campaigns' paid.ndjson files together, in bytes. */
  private async bytes(campaigns: readonly string[]): Promise<number> {
    let total = 0;
    for (const campaign of campaigns)
      total += (await stat(this.path(campaign, "paid.ndjson")).catch(() => undefined))?.size ?? 0;
    return total;
  }

  async filesLike(sha256: string, campaign: string, since: number): Promise<ImportedFile[]> {
    const found: ImportedFile[] = [];
    for (const other of await this.campaigns()) {
      if (other === campaign) continue;
      for await (const line of this.lines<ImportLine>(this.path(other, "imports.ndjson")))
        if (line.sha256 === sha256 && line.t >= since)
          found.push({ campaign: other, sha256, at: line.t, rows: line.rows });
    }
    return found.sort((a, b) => a.at - b.at);
  }

  async campaigns(): Promise<string[]> {
    try {
      const entries = await readdir(join(this.dataDir, "campaigns"), { withFileTypes: true });
      return entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }

  async prune(before: number): Promise<PaidPruned> {
    const pruned: PaidPruned = { entries: 0, imports: 0 };
    for (const campaign of await this.campaigns())
      for (const file of ["paid.ndjson", "imports.ndjson"] as const) {
        const { field, weigh } = WEIGHTS[file];
        const path = this.path(campaign, file);
        // Appends only add lines of now: a file with no old line is left alone, unlocked.
        if ((await tallyBefore(path, before, weigh)).old === 0) continue;
        pruned[field] += await this.locked(campaign, () => pruneFile(path, before, weigh));
      }
    return pruned;
  }

  async countBefore(before: number): Promise<PaidPruned> {
    const count: PaidPruned = { entries: 0, imports: 0 };
    for (const campaign of await this.campaigns())
      for (const file of ["paid.ndjson", "imports.ndjson"] as const) {
        const { field, weigh } = WEIGHTS[file];
        count[field] += (await tallyBefore(this.path(campaign, file), before, weigh)).entries;
      }
    return count;
  }

  /** The whole lines of a memory file, parsed (memoryLines: a torn last line is skipped). */
  private async *lines<T>(path: string): AsyncGenerator<T> {
    for await (const { text, number } of memoryLines(path))
      yield parseFileJson<T>(text, path, number);
  }
}
