import type { RawProduct } from "../api/schemas.js";
import type { CatalogSnapshot } from "../catalog/catalog-snapshot.js";
import { type CompactRecord, compactRecordOf } from "../catalog/compact-record.js";
import { PreviousDigests } from "../catalog/previous-digests.js";
import type { PreviousRecords } from "../catalog/previous-records.js";
import { parseDigestLine } from "../catalog/record-digest.js";
import { query } from "./catalog-snapshot.js";
import type { Database } from "./open-database.js";

/**
 * The previous snapshot as the diff sees it (PreviousRecords): the digest of each code (of the
 * first row of a repeated code, as digests.txt holds it), read from the snapshot's row in one
 * value, and the full records of the few changed and removed codes, read on demand.
 */
export async function loadDatabasePreviousRecords(
  database: Database,
  snapshot: CatalogSnapshot,
): Promise<PreviousRecords> {
  const [row] = await query<{ id: string; digests: string | null }>(
    database,
    "SELECT id, digests FROM catalog_snapshots WHERE name = $1",
    [snapshot.name],
  );
  const id = row?.id;
  const digests = new PreviousDigests();
  for (const line of (row?.digests ?? (await digestsOfRows(database, id))).split("\n")) {
    if (line === "") continue;
    const parsed = parseDigestLine(line);
    if (!parsed) throw new Error(`catalog_snapshots.digests: a line that does not read: ${line}`);
    digests.push(parsed.code, parsed.digest);
  }
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

/** The digests' lines from the snapshot's rows, for a row without its `digests`. */
async function digestsOfRows(database: Database, id: string | undefined): Promise<string> {
  const [found] = await query<{ lines: string | null }>(
    database,
    `SELECT string_agg(digest || ' ' || to_json(code)::text, E'\\n' ORDER BY position) AS lines
       FROM catalog_products WHERE snapshot_id = $1 AND digest IS NOT NULL`,
    [id],
  );
  return found?.lines ?? "";
}
