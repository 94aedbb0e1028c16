import type { JournalLine } from "../orders/journal.js";
import { JournalIndex } from "../orders/journal-index.js";
import type { JournalAppender, OrderJournal } from "../orders/journal-store.js";
import { type Database, queryRows } from "./open-database.js";

/**
 * Appends lines ($2: a JSON array of JournalLine) to campaign $1's journal in their order (seq
 * follows n): one statement, so all of them or none.
 */
export const INSERT_JOURNAL_LINES = `INSERT INTO order_journal (campaign, generation, order_key, identities, api_key_fingerprint)
  SELECT $1, (l ->> 'g')::integer, l ->> 'k',
         ARRAY(SELECT jsonb_array_elements_text(l -> 'i')), l ->> 'a'
    FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(l, n)
   ORDER BY n`;

/** Lines read per query: a page, so a large journal is never one result in memory. */
const PAGE = 5000;

/** A line as the table holds it. */
interface JournalRow {
  seq: string;
  g: number;
  k: string;
  i: string[];
  a: string | null;
}

/**
 * The order journal in PostgreSQL (`order_journal`, `order_tags_marker`; migration
 * 0002_journal_and_overrides.sql), used when GIFTJOBS_DATABASE_URL is set, so any machine can
 * re-import a campaign after a lost ledger (docs/architecture/keys-and-exactly-once.md, "Lost
 * ledger"). Each append is one INSERT, committed when it returns: before RECORD, or REKEY, runs.
 */
export class PgJournal implements OrderJournal {
  constructor(private readonly database: Database) {}

  where(campaign: string): string {
    return `table ${this.database.schema}.order_journal of PostgreSQL, campaign ${campaign}`;
  }

  load(campaign: string): Promise<JournalIndex> {
    return JournalIndex.fromBatches(this.where(campaign), campaign, this.pages(campaign));
  }

  /** The campaign's lines in the order they were written, a page at a time (by seq). */
  private async *pages(campaign: string): AsyncGenerator<{ line: JournalLine; number: number }[]> {
    let after = "0";
    for (;;) {
      const rows = await this.query<JournalRow>(
        `SELECT seq, generation AS g, order_key AS k, identities AS i, api_key_fingerprint AS a
           FROM order_journal WHERE campaign = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [campaign, after, PAGE],
      );
      if (rows.length === 0) return;
      yield rows.map(({ seq, g, k, i, a }) => ({
        line: a === null ? { g, k, i } : { g, k, i, a },
        number: Number(seq),
      }));
      after = rows.at(-1)!.seq;
    }
  }

  async append(campaign: string, lines: readonly JournalLine[]): Promise<void> {
    if (lines.length === 0) return;
    // A table has no void rows: voidChange deletes the row instead.
    if (lines.some((line) => line.void)) throw new Error("a void line is not appended: voidChange");
    // One statement, one transaction: all the lines or none, in their order (seq follows n).
    await this.query(INSERT_JOURNAL_LINES, [campaign, JSON.stringify(lines)]);
  }

  /**
   * The newest row of the change is deleted, in one statement: what a file's void line does
   * (JournalLine.void). Lines of one key are alike but for `a`, so which one goes does not
   * matter; a row another voidChange of the same key is deleting is skipped, so two refused
   * changes of one key take back two rows, not the same one twice.
   */
  async voidChange(campaign: string, line: JournalLine): Promise<void> {
    await this.query(
      `DELETE FROM order_journal WHERE seq = (
         SELECT seq FROM order_journal WHERE campaign = $1 AND order_key = $2 AND generation = $3
          ORDER BY seq DESC LIMIT 1 FOR UPDATE SKIP LOCKED)`,
      [campaign, line.k, line.g],
    );
  }

  appender(campaign: string): JournalAppender {
    return {
      append: (lines) => this.append(campaign, lines),
      close: async () => {},
    };
  }

  async hasTagsMarker(campaign: string): Promise<boolean> {
    const rows = await this.query("SELECT 1 FROM order_tags_marker WHERE campaign = $1", [
      campaign,
    ]);
    return rows.length > 0;
  }

  async writeTagsMarker(campaign: string): Promise<void> {
    await this.query(
      "INSERT INTO order_tags_marker (campaign) VALUES ($1) ON CONFLICT (campaign) DO NOTHING",
      [campaign],
    );
  }

  async campaigns(): Promise<string[]> {
    const rows = await this.query<{ campaign: string }>(
      "SELECT DISTINCT campaign FROM order_journal ORDER BY campaign",
      [],
    );
    return rows.map((r) => r.campaign);
  }

  private query<R>(text: string, values: unknown[]): Promise<R[]> {
    return queryRows<R>(this.database, text, values);
  }
}
