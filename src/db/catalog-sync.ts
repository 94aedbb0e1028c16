import type pg from "pg";
import type { CatalogDiff } from "../catalog/catalog-diff.js";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot.js";
import { newSnapshotName } from "../catalog/snapshot-layout.js";
import type { SnapshotManifest } from "../catalog/snapshot-manifest.js";
import { syncFailure } from "../catalog/sync-failure.js";
import type {
  FinishedSnapshot,
  SyncPlan,
  SyncSession,
  SyncStart,
} from "../catalog/sync-session.js";
import { RunError } from "../errors/run-error.js";
import { UserError } from "../errors/user-error.js";
import { takeTransactionLock } from "./advisory-lock.js";
import { loadDatabasePreviousRecords } from "./catalog-previous-records.js";
import { databaseSnapshotLabel, openDatabaseSnapshot } from "./catalog-snapshot.js";
import { DatabaseSnapshotWriter, productsPartition } from "./catalog-snapshot-writer.js";
import { CopyWriter, copyField } from "./copy-rows.js";
import { databaseFailure, isDatabaseAway } from "./database-error.js";
import { type Database, inTransaction } from "./open-database.js";

/** The advisory lock every catalog sync into one schema takes (docs/catalog-database.md, "Locks"). */
export const SYNC_LOCK = "catalog-sync";

/**
 * A sync into PostgreSQL (docs/catalog-database.md, "Syncing"): one transaction holds the new
 * snapshot's row, its products (one COPY as the pages arrive), its changes and the switch of
 * catalog_current, so a reader sees the previous snapshot until COMMIT and the whole new one
 * after. Any failure rolls it all back: nothing is published. A second sync into the same
 * schema, on any machine, stops at once with one line (the transaction's advisory lock).
 */
export async function startDatabaseSync(database: Database, plan: SyncPlan): Promise<SyncSession> {
  const client = await database.pool.connect().catch((error) => {
    throw databaseSyncFailure(error, database) ?? syncFailure(error, 0);
  });
  // A connection killed while lent out emits "error" on the client: the query fails instead.
  client.on("error", () => {});
  return new DatabaseSyncSession(database, client, plan);
}

class DatabaseSyncSession implements SyncSession {
  private writer: DatabaseSnapshotWriter | undefined;
  private snapshot: { id: string; name: string; current: CatalogSnapshot | undefined } | undefined;
  /** The connection went away: it is dropped from the pool rather than lent again. */
  private broken = false;

  constructor(
    private readonly database: Database,
    private readonly client: pg.PoolClient,
    private readonly plan: SyncPlan,
  ) {}

  /** Opens the transaction, takes the lock, and inserts the new snapshot's row and partition. */
  async begin(): Promise<SyncStart> {
    const { client, database, plan } = this;
    await client.query("BEGIN");
    await takeTransactionLock(
      client,
      database.schema,
      SYNC_LOCK,
      `another catalog sync is writing to PostgreSQL schema ${database.schema} (GIFTJOBS_DATABASE_URL); this one stopped and published nothing`,
    );
    const current = await openDatabaseSnapshot(database);
    const previous = current ? await loadDatabasePreviousRecords(database, current) : undefined;
    const name = newSnapshotName(new Date(plan.started));
    const fetchedAt = new Date(plan.started).toISOString();
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO catalog_snapshots
         (name, fetched_at, filters, product_count, pages, checksum, manifest, diff, previous_name)
       VALUES ($1, $2, $3, 0, 0, '', '{}', '{}', $4) RETURNING id`,
      [name, fetchedAt, JSON.stringify(plan.filters), current?.name ?? null],
    );
    const id = rows[0]!.id;
    this.snapshot = { id, name, current };
    this.writer = await DatabaseSnapshotWriter.start(client, id, fetchedAt, previous);
    return { name, current, writer: this.writer };
  }

  /** Nothing to save: a sync that dies rolls back, and the next starts again from page 1. */
  async pageWritten(): Promise<void> {}

  /** Writes the changes, completes the row, makes it current, and commits. */
  async publish({ manifest, diff }: FinishedSnapshot): Promise<string> {
    const { id, name, current } = this.begun();
    // With no previous snapshot every code is added: its rows are the partition's first row of
    // each code, copied there by PostgreSQL rather than sent again.
    await writeChanges(this.client, id, diff, { addedFromPartition: current === undefined });
    await publishSnapshotRow(this.client, id, manifest, diff, true);
    await this.client.query("COMMIT");
    return databaseSnapshotLabel(this.database, name);
  }

  prune(keep: number): Promise<string[]> {
    return prune(this.database, keep, this.begun().name, this.plan.log);
  }

  /** Rolls the transaction back: the snapshot's row, partition and changes go with it. */
  async fail(error: unknown): Promise<Error | undefined> {
    this.writer?.abort();
    this.broken = isDatabaseAway(error);
    await this.client.query("ROLLBACK").catch(() => {});
    return databaseSyncFailure(error, this.database);
  }

  async end(): Promise<void> {
    this.client.release(this.broken);
  }

  private begun(): { id: string; name: string; current: CatalogSnapshot | undefined } {
    if (!this.snapshot) throw new Error("the database sync was not begun");
    return this.snapshot;
  }
}

/**
 * The diff as rows of catalog_changes: one per added or removed code, one per changed field.
 * `addedFromPartition`: the added codes are the first row of each code in the snapshot's
 * partition (a first snapshot: every code is new), inserted from there.
 */
export async function writeChanges(
  client: pg.ClientBase,
  id: string,
  diff: CatalogDiff,
  options: { addedFromPartition?: boolean } = {},
): Promise<void> {
  let added = diff.added;
  if (options.addedFromPartition) {
    // digest is set on the first row of each code only (catalog-snapshot-writer.ts).
    const { rowCount } = await client.query(
      `INSERT INTO catalog_changes (snapshot_id, code, name, change)
       SELECT snapshot_id, code, name, 'added' FROM ${productsPartition(id)}
        WHERE digest IS NOT NULL`,
    );
    if (rowCount !== diff.added.length) {
      throw new Error(
        `catalog_changes: ${rowCount} codes added, the diff has ${diff.added.length}`,
      );
    }
    added = [];
  }
  const copy = CopyWriter.start(
    client,
    "catalog_changes (snapshot_id, code, name, change, field, old_value, new_value)",
  );
  const row = (values: (string | null)[]) => `${[id, ...values.map(copyField)].join("\t")}\n`;
  const text = (name: unknown) => (typeof name === "string" ? name : null);
  let lines = "";
  const flush = async (force = false) => {
    if (lines.length < 1 << 20 && !force) return;
    await copy.write(lines);
    lines = "";
  };
  for (const { code, name } of added) {
    lines += row([code, text(name), "added", null, null, null]);
    await flush();
  }
  for (const { code, name } of diff.removed) {
    lines += row([code, text(name), "removed", null, null, null]);
    await flush();
  }
  for (const change of diff.changed) {
    for (const [field, values] of Object.entries(change.fields)) {
      lines += row([
        change.code,
        text(change.name),
        "changed",
        field,
        JSON.stringify(values?.old ?? null),
        JSON.stringify(values?.new ?? null),
      ]);
    }
    await flush();
  }
  await flush(true);
  await copy.finish();
}

/** Completes the snapshot's row and (`current`) makes it current, inside the caller's transaction. */
export async function publishSnapshotRow(
  client: pg.ClientBase,
  id: string,
  manifest: SnapshotManifest,
  diff: CatalogDiff,
  current: boolean,
): Promise<void> {
  await client.query(
    `UPDATE catalog_snapshots SET api_version = $2, product_count = $3, pages = $4,
       checksum = $5, warnings = $6, manifest = $7, diff = $8 WHERE id = $1`,
    [
      id,
      manifest.api_version,
      manifest.product_count,
      manifest.pages,
      manifest.sha256,
      JSON.stringify(manifest.warnings),
      JSON.stringify(manifest),
      JSON.stringify(diff),
    ],
  );
  if (!current) return;
  await client.query(
    `INSERT INTO catalog_current (only_row, snapshot_id) VALUES (true, $1)
     ON CONFLICT (only_row) DO UPDATE SET snapshot_id = EXCLUDED.snapshot_id`,
    [id],
  );
}

/**
 * Retention as for files: all but the newest `keep` snapshots go (their partition of products
 * dropped, their changes deleted with their row), never the current one. After the publish, in a
 * transaction of its own: a failure here leaves an extra snapshot, never a missing one, and is
 * only a warning.
 */
async function prune(
  database: Database,
  keep: number,
  current: string,
  log: SyncPlan["log"],
): Promise<string[]> {
  try {
    return await inTransaction(database, async (client) => {
      const { rows } = await client.query<{ id: string; name: string }>(
        `DELETE FROM catalog_snapshots WHERE name <> $2 AND id NOT IN (
           SELECT id FROM catalog_snapshots ORDER BY name DESC LIMIT $1)
         RETURNING id, name`,
        [keep, current],
      );
      if (rows.length === 0) return [];
      await client.query("DELETE FROM catalog_changes WHERE snapshot_id = ANY($1::bigint[])", [
        rows.map((r) => r.id),
      ]);
      for (const { id } of rows)
        await client.query(`DROP TABLE IF EXISTS ${productsPartition(id)}`);
      return rows.map((r) => r.name);
    });
  } catch (error) {
    log.warn({ error: (error as Error).message }, "could not remove old snapshots");
    return [];
  }
}

/**
 * PostgreSQL's part of the sync's one line: a setting to fix (exit 2) or a database away (exit
 * 1), said with "nothing was published"; undefined for the failures syncFailure tells.
 */
function databaseSyncFailure(error: unknown, database: Database): Error | undefined {
  if (error instanceof RunError) return undefined;
  const mapped = databaseFailure(error, database.url);
  if (!(mapped instanceof UserError)) return undefined;
  const exit = mapped.exitCode === 2 ? UserError : RunError;
  return new exit(
    `catalog sync failed: ${mapped.message}; nothing was published and the current snapshot is unchanged`,
    { cause: error },
  );
}
