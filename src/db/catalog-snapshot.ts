import type { RawProduct } from "../api/schemas.js";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot.js";
import type { CatalogDiff } from "../catalog/diff-file.js";
import type { CatalogIndex, CatalogIndexEntry } from "../catalog/index-entry.js";
import type { SnapshotManifest } from "../catalog/snapshot-manifest.js";
import { RunError } from "../errors/run-error.js";
import { databaseFailure } from "./database-error.js";
import type { Database } from "./open-database.js";

/** Rows read at a time when a snapshot's products are walked. */
const BATCH = 2000;

/** A snapshot's row as the readers need it. */
interface SnapshotRow {
  id: string;
  name: string;
  manifest: SnapshotManifest;
}

/** How a snapshot in the database is named where a file snapshot shows its directory. */
export function databaseSnapshotLabel(database: Database, name: string): string {
  return `postgresql:${database.schema}/${name}`;
}

/**
 * The snapshot catalog_current points at, or undefined when no sync has published one. Its rows
 * are never changed after publication (retention deletes whole snapshots, never the current).
 */
export async function openDatabaseSnapshot(
  database: Database,
): Promise<CatalogSnapshot | undefined> {
  const row = await query<SnapshotRow>(
    database,
    `SELECT s.id, s.name, s.manifest FROM catalog_current c
     JOIN catalog_snapshots s ON s.id = c.snapshot_id`,
  );
  return row[0] ? databaseSnapshot(database, row[0]) : undefined;
}

function databaseSnapshot(database: Database, row: SnapshotRow): CatalogSnapshot {
  const id = row.id;
  return {
    name: row.name,
    dir: databaseSnapshotLabel(database, row.name),
    manifest: row.manifest,
    index: () => readIndex(database, id, row.manifest.fetched_at),
    products: () => readProducts(database, id),
    verifyProducts: async () => {
      // The rows were written in one transaction and are never modified: count them, as a check
      // that the snapshot is whole (a hand-made deletion shows here).
      const [count] = await query<{ n: number }>(
        database,
        "SELECT count(*)::int AS n FROM catalog_products WHERE snapshot_id = $1",
        [id],
      );
      if (count?.n !== row.manifest.product_count) {
        throw new RunError(
          `snapshot ${row.name} in ${database.schema}.catalog_products has ${count?.n} products, its manifest ${row.manifest.product_count}: it was changed after publication`,
        );
      }
    },
    diff: async () => {
      const [found] = await query<{ diff: CatalogDiff | null }>(
        database,
        "SELECT diff FROM catalog_snapshots WHERE id = $1",
        [id],
      );
      return found?.diff ?? undefined;
    },
  };
}

/** Runs a statement on the pool; PostgreSQL away is said in one line (databaseFailure). */
export async function query<R extends object>(
  database: Database,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  try {
    return (await database.pool.query<R>(text, values)).rows;
  } catch (error) {
    throw databaseFailure(error, database.url);
  }
}

/** The rows of a snapshot in order, `columns` of each, BATCH at a time (keyset on position). */
async function* rowsOf<R extends object>(
  database: Database,
  id: string,
  columns: string,
): AsyncGenerator<R[]> {
  let after = -1;
  for (;;) {
    const rows = await query<R & { position: number }>(
      database,
      `SELECT position, ${columns} FROM catalog_products
       WHERE snapshot_id = $1 AND position > $2 ORDER BY position LIMIT ${BATCH}`,
      [id, after],
    );
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.position;
    if (rows.length < BATCH) return;
  }
}

async function* readProducts(database: Database, id: string): AsyncGenerator<RawProduct> {
  for await (const rows of rowsOf<{ record: RawProduct }>(database, id, "record")) {
    for (const row of rows) yield row.record;
  }
}

/** The index, as index.json holds it: of a code listed twice, the last entry wins. */
async function readIndex(database: Database, id: string, fetchedAt: string): Promise<CatalogIndex> {
  const entries: Record<string, CatalogIndexEntry> = {};
  // index_entries is a JSON array kept as text (src/db/migrations/0001_catalog.sql).
  for await (const rows of rowsOf<{ index_entries: string }>(database, id, "index_entries")) {
    for (const row of rows) {
      for (const entry of JSON.parse(row.index_entries) as CatalogIndexEntry[]) {
        entries[entry.code] = entry;
      }
    }
  }
  return { fetched_at: fetchedAt, entries };
}
