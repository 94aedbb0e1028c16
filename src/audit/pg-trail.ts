import { type Database, inTransaction, queryRows } from "../db/open-database.js";
import {
  type AuditDraft,
  type AuditEntry,
  type AuditFilter,
  entryText,
  FIRST_PREV,
  matches,
  sealEntry,
} from "./entry.js";
import type { AuditTrail } from "./trail.js";
import { readEntry, verifyChain } from "./verify.js";

/**
 * The audit trail in PostgreSQL: the table `audit_entries` (src/db/migrations/0004_audit.sql),
 * whose triggers refuse UPDATE, DELETE and TRUNCATE. Appends take the table's EXCLUSIVE lock
 * (reads go on) for the moment of reading the last entry and inserting the next: two processes
 * never chain to the same entry (docs/architecture/audit.md, "Where it is kept").
 */
export class PgAuditTrail implements AuditTrail {
  readonly place = "PostgreSQL table audit_entries";

  /** `owned`: the trail opened the database, and closes it. */
  constructor(
    private readonly database: Database,
    private readonly owned = false,
  ) {}

  async append(draft: AuditDraft): Promise<AuditEntry> {
    return inTransaction(this.database, async (client) => {
      await client.query("LOCK TABLE audit_entries IN EXCLUSIVE MODE");
      const { rows } = await client.query<{ seq: string; hash: string }>(
        "SELECT seq, hash FROM audit_entries ORDER BY seq DESC LIMIT 1",
      );
      const last = rows[0];
      const entry = sealEntry(draft, last ? Number(last.seq) + 1 : 1, last?.hash ?? FIRST_PREV);
      await client.query(
        "INSERT INTO audit_entries (seq, at, actor, action, campaign, entry, hash) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [
          entry.seq,
          entry.at,
          entry.actor,
          entry.action,
          entry.campaign,
          entryText(entry),
          entry.hash,
        ],
      );
      return entry;
    });
  }

  async list(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.campaign !== undefined) {
      values.push(filter.campaign);
      where.push(`campaign = $${values.length}`);
    }
    if (filter.since) {
      values.push(filter.since.toISOString());
      where.push(`at >= $${values.length}`);
    }
    const rows = await queryRows<{ entry: string }>(
      this.database,
      `SELECT entry FROM audit_entries ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq`,
      values,
    );
    // The columns only narrow the search: what is shown is the entry's own text. The actor is
    // matched here, as an identity (actorKey), which SQL's lower() is not.
    return rows.flatMap(({ entry }) => {
      const parsed = readEntry(entry);
      return parsed && matches(parsed, filter) ? [parsed] : [];
    });
  }

  async verify() {
    return verifyChain(await this.stored());
  }

  async read(filter: AuditFilter = {}) {
    const entries: AuditEntry[] = [];
    const check = await verifyChain(await this.stored(), undefined, (entry) => {
      if (matches(entry, filter)) entries.push(entry);
    });
    return { entries, check };
  }

  private async stored() {
    const rows = await queryRows<{ entry: string }>(
      this.database,
      "SELECT entry FROM audit_entries ORDER BY seq",
    );
    return rows.map(({ entry }, i) => ({ place: `row ${i + 1}`, text: entry }));
  }

  async close(): Promise<void> {
    if (this.owned) await this.database.close();
  }
}
