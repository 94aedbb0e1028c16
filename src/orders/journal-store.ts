import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  appendJournalLines,
  type JournalLine,
  journalPath,
  OrderJournalWriter,
  voidLine,
} from "./journal.js";
import { JournalIndex } from "./journal-index.js";
import { hasTagsMarker, writeTagsMarker } from "./order-tags.js";

/** What takes an import's orders, a batch at a time, until it is closed. */
export interface JournalAppender {
  /** Appends the lines; they are durable (flushed, or committed) when it returns. */
  append(lines: readonly JournalLine[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where campaigns' orders are journaled (docs/architecture/keys-and-exactly-once.md, "Lost
 * ledger"): files under the data dir, or PostgreSQL when GIFTJOBS_DATABASE_URL is set
 * (src/db/order-journal.ts). Either keeps the lines in the order they were appended, and the tags
 * marker (order-tags.ts) beside them.
 */
export interface OrderJournal {
  /** The journal of `campaign` as messages name it: its file, or its place in the database. */
  where(campaign: string): string;
  /** The journal read for an import; empty when the campaign has none. */
  load(campaign: string): Promise<JournalIndex>;
  /** A generation change (a worker, `orders retry --new-key`), durable when it returns. */
  append(campaign: string, lines: readonly JournalLine[]): Promise<void>;
  /**
   * Takes back a generation change this process appended whose REKEY then refused (the ledger
   * never held its key, so nothing can have sent it), durable when it returns: the file gets a
   * void line, the database loses the row. Readers then take the journal as if the change was
   * never written (docs/architecture/keys-and-exactly-once.md,
   * "One key while an order may exist": a refused REKEY is voided).
   */
  voidChange(campaign: string, line: JournalLine): Promise<void>;
  /** Where an import's new orders go, a batch at a time. */
  appender(campaign: string): JournalAppender;
  hasTagsMarker(campaign: string): Promise<boolean>;
  /** Writes the marker, durable, before any tagged order is journaled. */
  writeTagsMarker(campaign: string): Promise<void>;
  /** The campaigns with a journal, sorted (audit verify: each has an import entry). */
  campaigns(): Promise<string[]>;
}

/** The journal as files: `campaigns/NAME/orders.ndjson` and `order-tags` under the data dir. */
export class FileJournal implements OrderJournal {
  constructor(readonly dataDir: string) {}

  where(campaign: string): string {
    return journalPath(this.dataDir, campaign);
  }

  load(campaign: string): Promise<JournalIndex> {
    return JournalIndex.load(this.where(campaign), campaign);
  }

  append(campaign: string, lines: readonly JournalLine[]): Promise<void> {
    return appendJournalLines(this.where(campaign), lines);
  }

  /** A void line appended (a file is only appended to: the line it takes back stays). */
  voidChange(campaign: string, line: JournalLine): Promise<void> {
    return appendJournalLines(this.where(campaign), [voidLine(line)]);
  }

  appender(campaign: string): JournalAppender {
    return new OrderJournalWriter(this.where(campaign));
  }

  hasTagsMarker(campaign: string): Promise<boolean> {
    return hasTagsMarker(this.dataDir, campaign);
  }

  writeTagsMarker(campaign: string): Promise<void> {
    return writeTagsMarker(this.dataDir, campaign);
  }

  /** The campaign folders whose journal file has a line. */
  async campaigns(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(join(this.dataDir, "campaigns"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const journaled = await Promise.all(
      names.map((name) =>
        stat(this.where(name)).then(
          (s) => s.size > 0,
          () => false,
        ),
      ),
    );
    return names.filter((_, i) => journaled[i]).sort();
  }
}
