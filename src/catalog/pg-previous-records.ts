import type { RawProduct } from "../api/schemas.js";
import type { Database } from "../db/open-database.js";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { type CompactRecord, compactRecordOf } from "./compact-record.js";
import { query } from "./pg-snapshot.js";
import { PreviousDigests } from "./previous-digests.js";
import type { PreviousRecords } from "./previous-records.js";

/**
 * The previous snapshot as the diff sees it (PreviousRecords), from its rows: the digest saved
 * with each code (the first row of a repeated code, as digests.txt holds it), and the full
 * records of the few changed and removed codes, read on demand.
 */
export async function loadDatabasePreviousRecords(
  database: Database,
  snapshot: CatalogSnapshot,
): Promise<PreviousRecords> {
  const [row] = await query<{ id: string }>(
    database,
    "SELECT id FROM catalog_snapshots WHERE name = $1",
    [snapshot.name],
  );
  const id = row?.id;
  const digests = new PreviousDigests();
  const rows = await query<{ code: string; digest: string }>(
    database,
    `SELECT code, digest FROM catalog_products
     WHERE snapshot_id = $1 AND digest IS NOT NULL ORDER BY position`,
    [id],
  );
  for (const { code, digest } of rows) digests.push(code, digest);
  rows.length = 0;
  return {
    name: snapshot.name,
    digests,
    read: async (codes) => {
      const out = new Map<string, CompactRecord>();
      if (codes.size === 0) return out;
      const found = await query<{ record: RawProduct }>(
        database,
        `SELECT record FROM catalog_products
         WHERE snapshot_id = $1 AND digest IS NOT NULL AND code = ANY($2::text[])`,
        [id, [...codes]],
      );
      for (const { record } of found) out.set(record.code, compactRecordOf(record));
      return out;
    },
  };
}
