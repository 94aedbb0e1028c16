import type {
  ImportedFile,
  PaidAppender,
  PaidEntry,
  PaidLookup,
  PaidMemory,
  PaidPruned,
} from "../orders/paid-memory.js";
import { type Database, inTransaction, queryRows } from "./open-database.js";

/** A row of `paid_rows` as a lookup reads it: a PaidEntry, `at` as bigint text. */
type PaidRow = Omit<PaidEntry, "at"> & { at: string };

/**
 * Rows an import appends from which it has PostgreSQL analyze `paid_rows` when it closes. Until
 * the table's statistics count a big import's rows, the planner takes the fingerprint index for
 * one that finds most of the table, and reads all of it for each lookup: autovacuum's analyze
 * comes a minute later at best, and an import that repeats the one just made looks up at once.
 * Measured at a million rows: 265 ms a lookup of 500 fingerprints before the analyze, 3.4 ms
 * after (docs/architecture/repeats.md, "The check").
 */
const ANALYZE_AFTER_ROWS = 10_000;

/**
 * The paid memory in PostgreSQL (`paid_rows`, `imported_files`; migration 0003_paid_memory.sql),
 * used when GIFTJOBS_DATABASE_URL is set, as the order journal is. A lookup asks for one batch of
 * fingerprints in one query (the index on fingerprint), never a row at a time.
 */
export class PgPaidMemory implements PaidMemory {
  constructor(private readonly database: Database) {}

  appender(campaign: string): PaidAppender {
    let appended = 0;
    return {
      append: async (entries) => {
        if (entries.length === 0) return;
        appended += entries.length;
        const rows = entries.map((e) => [e.fingerprint, e.identity, e.line, e.currency, e.face]);
        // One statement: the batch's rows or none, committed when it returns.
        await this.query(
          `INSERT INTO paid_rows (campaign, fingerprint, identity, line, currency, face_units)
           SELECT $1, r ->> 0, r ->> 1, (r ->> 2)::integer, r ->> 3, (r ->> 4)::bigint
             FROM jsonb_array_elements($2::jsonb) AS t(r)`,
          [campaign, JSON.stringify(rows)],
        );
      },
      close: async () => {
        if (appended < ANALYZE_AFTER_ROWS) return;
        // The rows are committed: the statistics are a help to the next lookup, no part of them.
        await this.query("ANALYZE paid_rows", []).catch(() => {});
      },
    };
  }

  async recordFile(campaign: string, sha256: string, rows: number): Promise<void> {
    await this.query(
      "INSERT INTO imported_files (campaign, file_sha256, rows) VALUES ($1, $2, $3)",
      [campaign, sha256, rows],
    );
  }

  async lookup(campaign: string, since: number): Promise<PaidLookup> {
    return {
      find: async (fingerprints) => {
        const wanted = [...new Set(fingerprints.filter((f): f is string => f !== undefined))];
        if (wanted.length === 0) return fingerprints.map(() => []);
        const rows = await this.query<PaidRow>(
          `SELECT campaign, fingerprint, identity, line, currency, face_units::text AS face,
                  (extract(epoch FROM recorded_at) * 1000)::bigint::text AS at
             FROM paid_rows
            WHERE fingerprint = ANY($1) AND campaign <> $2 AND recorded_at >= to_timestamp($3 / 1000.0)`,
          [wanted, campaign, since],
        );
        const byFingerprint = new Map<string, PaidEntry[]>();
        for (const row of rows) {
          const list = byFingerprint.get(row.fingerprint) ?? [];
          list.push({ ...row, at: Number(row.at) });
          byFingerprint.set(row.fingerprint, list);
        }
        return fingerprints.map((f) => (f === undefined ? [] : (byFingerprint.get(f) ?? [])));
      },
      // Each find is a query of its own: nothing is held between them.
      close: async () => {},
    };
  }

  async filesLike(sha256: string, campaign: string, since: number): Promise<ImportedFile[]> {
    const rows = await this.query<{ campaign: string; at: string; rows: number }>(
      `SELECT campaign, (extract(epoch FROM imported_at) * 1000)::bigint::text AS at, rows
         FROM imported_files
        WHERE file_sha256 = $1 AND campaign <> $2 AND imported_at >= to_timestamp($3 / 1000.0)
        ORDER BY imported_at`,
      [sha256, campaign, since],
    );
    return rows.map((r) => ({ campaign: r.campaign, sha256, at: Number(r.at), rows: r.rows }));
  }

  async campaigns(): Promise<string[]> {
    const rows = await this.query<{ campaign: string }>(
      `SELECT campaign FROM imported_files UNION SELECT DISTINCT campaign FROM order_journal`,
      [],
    );
    return rows.map((r) => r.campaign);
  }

  async prune(before: number): Promise<PaidPruned> {
    // One transaction: both tables pruned, or neither.
    return inTransaction(this.database, async (client) => {
      const rows = await client.query(
        "DELETE FROM paid_rows WHERE recorded_at < to_timestamp($1 / 1000.0)",
        [before],
      );
      const files = await client.query(
        "DELETE FROM imported_files WHERE imported_at < to_timestamp($1 / 1000.0)",
        [before],
      );
      return { entries: rows.rowCount ?? 0, imports: files.rowCount ?? 0 };
    });
  }

  async countBefore(before: number): Promise<PaidPruned> {
    const [row] = await this.query<PaidPruned>(
      `SELECT (SELECT count(*) FROM paid_rows WHERE recorded_at < to_timestamp($1 / 1000.0))::int AS entries,
              (SELECT count(*) FROM imported_files WHERE imported_at < to_timestamp($1 / 1000.0))::int AS imports`,
      [before],
    );
    return row!;
  }

  private query<R>(text: string, values: unknown[]): Promise<R[]> {
    return queryRows<R>(this.database, text, values);
  }
}
