import type pg from "pg";
import { ServiceUnreachableError } from "../api/errors/service-unreachable-error.js";
import { takeTransactionLock } from "./advisory-lock.js";
import { CopyWriter, copyField } from "./copy-rows.js";
import { databaseFailure, isDatabaseAway } from "./database-error.js";
import { type Database, inTransaction } from "./open-database.js";
import { RunError } from "../errors/runtime-error.js";
import { UserError } from "../errors/user-error.js";
import { silentLogger } from "../log.js";
import type { CatalogDiff } from "../catalog/catalog-diff.js";
import { filtersToQuery, normalizeFilters } from "../catalog/catalog-filters.js";
import { fetchPages } from "../catalog/page-fetcher.js";
import { loadDatabasePreviousRecords } from "./catalog-previous-records.js";
import { databaseSnapshotLabel, openDatabaseSnapshot } from "./catalog-snapshot.js";
import { DatabaseSnapshotWriter, productsPartition } from "./catalog-snapshot-writer.js";
import { newSnapshotName } from "../catalog/snapshot-layout.js";
import type { SnapshotManifest } from "../catalog/snapshot-manifest.js";
import { describe, guardShrink } from "../catalog/sync-failure.js";
import type { SyncCatalogOptions, SyncCatalogResult } from "../catalog/sync-options.js";

/** The advisory lock every catalog sync into one schema takes (docs/catalog-database.md, "Locks"). */
export const SYNC_LOCK = "catalog-sync";

/**
 * syncCatalog into PostgreSQL (docs/catalog-database.md, "Syncing"): one transaction holds the
 * new snapshot's row, its products (one COPY as the pages arrive), its changes and the switch
 * of catalog_current, so a reader sees the previous snapshot until COMMIT and the whole new one
 * after. Any failure rolls it all back: nothing is published. A second sync into the same
 * schema, on any machine, stops at once with one line (the transaction's advisory lock).
 */
export async function syncIntoDatabase(
  options: SyncCatalogOptions,
  database: Database,
): Promise<SyncCatalogResult> {
  const log = options.log ?? silentLogger;
  const client = await database.pool.connect().catch((error) => {
    throw failed(error, database, 0);
  });
  // A connection killed while lent out emits "error" on the client: the query fails instead.
  client.on("error", () => {});
  let pages = 0;
  let writer: DatabaseSnapshotWriter | undefined;
  let broken = false;
  try {
    await client.query("BEGIN");
    await takeTransactionLock(
      client,
      database.schema,
      SYNC_LOCK,
      `another catalog sync is writing to PostgreSQL schema ${database.schema} (GIFTJOBS_DATABASE_URL); this one stopped and published nothing`,
    );
    const result = await writeSnapshot(options, database, client, {
      onWriter: (w) => {
        writer = w;
      },
      onPage: (n) => {
        pages = n;
      },
    });
    await client.query("COMMIT");
    await prune(database, options.keep ?? 14, result.snapshot, log);
    return result;
  } catch (error) {
    writer?.abort();
    broken = isDatabaseAway(error);
    await client.query("ROLLBACK").catch(() => {});
    throw failed(error, database, pages);
  } finally {
    client.release(broken);
  }
}

async function writeSnapshot(
  options: SyncCatalogOptions,
  database: Database,
  client: pg.PoolClient,
  hooks: { onWriter: (w: DatabaseSnapshotWriter) => void; onPage: (n: number) => void },
): Promise<SyncCatalogResult> {
  const started = Date.now();
  const filters = normalizeFilters(options.filters);
  const current = await openDatabaseSnapshot(database);
  const previous = current ? await loadDatabasePreviousRecords(database, current) : undefined;
  const name = newSnapshotName(new Date(started));
  const fetchedAt = new Date(started).toISOString();
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO catalog_snapshots
       (name, fetched_at, filters, product_count, pages, checksum, manifest, diff, previous_name)
     VALUES ($1, $2, $3, 0, 0, '', '{}', '{}', $4) RETURNING id`,
    [name, fetchedAt, JSON.stringify(filters), current?.name ?? null],
  );
  const id = rows[0]!.id;
  const writer = await DatabaseSnapshotWriter.start(client, id, fetchedAt, previous);
  hooks.onWriter(writer);
  let pages = 0;
  let apiVersion: string | null = null;
  for await (const page of fetchPages({
    client: options.client,
    query: filtersToQuery(filters, options.pageSize ?? 500),
    retry: options.retry,
    signal: options.signal,
    onRetry: (error, page, attempt) =>
      options.log?.warn({ page, attempt, error: describe(error) }, "retrying catalog page"),
  })) {
    await writer.add(page.products, page.text);
    pages = page.number;
    hooks.onPage(pages);
    apiVersion = page.apiVersion ?? apiVersion;
    options.onProgress?.({ pages, products: writer.productCount });
  }
  guardShrink(current, writer.productCount, filters, options);
  const { manifest, diff } = await writer.finish({
    snapshot: name,
    api_version: apiVersion ?? options.apiVersion ?? null,
    filters,
    pages,
    duration_ms: Date.now() - started,
  });
  // With no previous snapshot every code is added: its rows are the partition's first row of
  // each code, copied there by PostgreSQL rather than sent again.
  await writeChanges(client, id, diff, { addedFromPartition: current === undefined });
  await publishSnapshotRow(client, id, manifest, diff, true);
  return {
    snapshot: name,
    dir: databaseSnapshotLabel(database, name),
    manifest,
    diff: { from: diff.from, summary: diff.summary },
  };
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
    // digest is set on the first row of each code only (pg-snapshot-writer.ts).
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
 * transaction of its own: a failure here leaves an extra snapshot, never a missing one.
 */
async function prune(
  database: Database,
  keep: number,
  current: string,
  log: typeof silentLogger,
): Promise<void> {
  try {
    const pruned = await inTransaction(database, async (client) => {
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
    if (pruned.length > 0) log.info({ pruned }, "removed old snapshots");
  } catch (error) {
    log.warn({ error: (error as Error).message }, "could not remove old snapshots");
  }
}

/** The sync's one line: what failed, and that nothing was published (exit 1; 2 for settings). */
function failed(error: unknown, database: Database, pages: number): Error {
  if (error instanceof RunError) return error;
  const mapped = databaseFailure(error, database.url);
  if (mapped instanceof UserError) {
    const exit = mapped.exitCode === 2 ? UserError : RunError;
    return new exit(
      `catalog sync failed: ${mapped.message}; nothing was published and the current snapshot is unchanged`,
      { cause: error },
    );
  }
  if (error instanceof ServiceUnreachableError) {
    return new RunError(`${error.message} The current snapshot is unchanged.`, { cause: error });
  }
  const reason = describe(error);
  const where = reason.startsWith("page ") ? "" : ` at page ${pages + 1}`;
  return new RunError(`catalog sync failed${where}: ${reason}; the current snapshot is unchanged`, {
    cause: error,
  });
}
