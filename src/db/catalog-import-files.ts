import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { readCurrentPointer } from "../catalog/current-pointer.js";
import { readFileJson } from "../catalog/damaged-file-error.js";
import type { CatalogDiff } from "../catalog/diff-file.js";
import { readProductPages } from "../catalog/products-file-reader.js";
import { SNAPSHOT_FILES, snapshotsDir } from "../catalog/snapshot-layout.js";
import type { SnapshotManifest } from "../catalog/snapshot-manifest.js";
import { takeTransactionLock } from "./advisory-lock.js";
import { query } from "./catalog-snapshot.js";
import { DatabaseSnapshotWriter } from "./catalog-snapshot-writer.js";
import { publishSnapshotRow, SYNC_LOCK, writeChanges } from "./catalog-sync.js";
import type { Database } from "./open-database.js";
import { inTransaction } from "./open-database.js";

export interface ImportFilesResult {
  /** Snapshots written into the database by this run, oldest first. */
  imported: string[];
  /** Snapshots the database held already (a rerun imports nothing twice). */
  skipped: string[];
  /** The database's current snapshot after the run, if any. */
  current: string | undefined;
}

/**
 * `giftjobs catalog import-files` (docs/catalog-database.md, "Moving file snapshots in"): each
 * published file snapshot of `dataDir` the database does not hold yet is written into it, oldest
 * first, each in one transaction under the sync's lock: its products as a sync writes them, its
 * manifest and diff as the files have them. The files' current snapshot becomes the database's
 * when the database has none or an older one. Nothing is removed from the data dir.
 */
export async function importFileSnapshots(
  dataDir: string,
  database: Database,
  onSnapshot?: (name: string, products: number) => void,
): Promise<ImportFilesResult> {
  const names = (await readdir(snapshotsDir(dataDir)).catch(() => [] as string[])).sort();
  const held = new Set(
    (await query<{ name: string }>(database, "SELECT name FROM catalog_snapshots")).map(
      (r) => r.name,
    ),
  );
  const pointer = await readCurrentPointer(dataDir);
  const result: ImportFilesResult = { imported: [], skipped: [], current: undefined };
  for (const name of names) {
    if (held.has(name)) {
      result.skipped.push(name);
      continue;
    }
    const dir = join(snapshotsDir(dataDir), name);
    const manifest = await readFileJson<SnapshotManifest>(join(dir, SNAPSHOT_FILES.manifest));
    // A directory without a manifest is no published snapshot (a leftover): not imported.
    if (!manifest) continue;
    const count = await importOne(database, dir, name, manifest, name === pointer?.name);
    onSnapshot?.(name, count);
    result.imported.push(name);
  }
  const [current] = await query<{ name: string }>(
    database,
    "SELECT s.name FROM catalog_current c JOIN catalog_snapshots s ON s.id = c.snapshot_id",
  );
  result.current = current?.name;
  return result;
}

async function importOne(
  database: Database,
  dir: string,
  name: string,
  manifest: SnapshotManifest,
  isFileCurrent: boolean,
): Promise<number> {
  const diff = (await readFileJson<CatalogDiff>(join(dir, SNAPSHOT_FILES.diff))) ?? {
    from: null,
    to: name,
    summary: { added: 0, removed: 0, changed: 0, unchanged: 0 },
    added: [],
    removed: [],
    changed: [],
  };
  return inTransaction(database, async (client) => {
    await takeTransactionLock(
      client,
      database.schema,
      SYNC_LOCK,
      `a catalog sync is writing to PostgreSQL schema ${database.schema} (GIFTJOBS_DATABASE_URL); run import-files again when it is done`,
    );
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO catalog_snapshots
         (name, fetched_at, filters, product_count, pages, checksum, manifest, diff, previous_name)
       VALUES ($1, $2, $3, 0, 0, '', '{}', '{}', $4) RETURNING id`,
      [name, manifest.fetched_at, JSON.stringify(manifest.filters), diff.from],
    );
    const id = rows[0]!.id;
    // No previous records: every code is new to the writer, which then digests each one, as
    // the next sync's diff needs; the diff itself is the file's own.
    const writer = await DatabaseSnapshotWriter.start(client, id, manifest.fetched_at, undefined);
    for await (const { products, text } of readProductPages(join(dir, SNAPSHOT_FILES.products))) {
      await writer.add(products, Buffer.from(text, "utf8"));
    }
    const written = await writer.finish({ ...manifest });
    await writeChanges(client, id, diff);
    // The database's current snapshot moves only forward in time (names sort by time).
    const [current] = (
      await client.query<{ name: string }>(
        "SELECT s.name FROM catalog_current c JOIN catalog_snapshots s ON s.id = c.snapshot_id",
      )
    ).rows;
    const makeCurrent = isFileCurrent && (!current || current.name < name);
    await publishSnapshotRow(
      client,
      id,
      { ...manifest, product_count: written.manifest.product_count },
      diff,
      makeCurrent,
    );
    return written.manifest.product_count;
  });
}
