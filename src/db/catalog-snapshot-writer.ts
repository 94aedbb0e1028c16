import { createHash, type Hash } from "node:crypto";
import type pg from "pg";
import type { RawProduct } from "../api/schemas.js";
import type { CatalogDiff } from "../catalog/catalog-diff.js";
import { recordSlices } from "../catalog/catalog-slices.js";
import type { PreviousRecords } from "../catalog/previous-records.js";
import { denominationsOf } from "../catalog/product-denominations.js";
import { asString, asStringList } from "../catalog/product-fields.js";
import { digestLine } from "../catalog/record-digest.js";
import type { SnapshotManifest } from "../catalog/snapshot-manifest.js";
import { type ManifestMeta, SnapshotTally } from "../catalog/snapshot-tally.js";
import {
  CopyLines,
  CopyWriter,
  copyBytes,
  copyField,
  copyJson,
  copyTextArray,
  needsCopyEscapes,
} from "./copy-rows.js";

// `record` last: each line is the other fields' text, then the record's bytes (CopyLines).
const PRODUCT_COLUMNS =
  "(snapshot_id, position, code, name, currency, payout_type, state, " +
  "availability, is_orderable, countries, denominations, min_value, max_value, " +
  "index_entries, digest, record)";

/** products.json's layout (ProductsFileWriter): the checksum is of the same bytes. */
const FILE_HEAD = Buffer.from("[\n");
const FILE_SEPARATOR = Buffer.from(",\n");
const FILE_TAIL = Buffer.from("\n]\n");

/** The partition of catalog_products holding snapshot `id`'s products. */
export function productsPartition(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not a snapshot id: ${id}`);
  return `catalog_products_${id}`;
}

/** A decimal PostgreSQL's numeric takes; anything else is stored as null (the record keeps it). */
const DECIMAL = /^-?\d{1,30}(\.\d{1,30})?$/;

/**
 * Writes one snapshot's products into PostgreSQL as pages arrive, through one COPY on the sync's
 * connection (inside its transaction): the columns people filter on, the whole record as jsonb,
 * the index entries and the diff's digest. Checks, counts, warnings and the diff are those of
 * SnapshotWriter, kept by the same SnapshotTally product for product; the checksum and
 * byte count are those of the products.json a file sync would write (the same catalog gives the
 * same manifest.sha256 in both stores).
 */
export class DatabaseSnapshotWriter {
  private readonly tally: SnapshotTally;
  private readonly hash: Hash = createHash("sha256");
  private readonly copy: CopyWriter;
  /** Codes the service sent more than once: all but their last row are marked superseded. */
  private readonly repeated = new Set<string>();
  /** digests.txt's lines, as bytes (no string per line): the next sync's diff reads them. */
  private readonly digestLines = new CopyLines(1 << 20);
  private bytes = 0;
  productCount = 0;

  private constructor(
    private readonly client: pg.ClientBase,
    private readonly snapshotId: string,
    private readonly fetchedAt: string,
    previous: PreviousRecords | undefined,
  ) {
    this.tally = new SnapshotTally(previous);
    this.copy = CopyWriter.start(client, `${productsPartition(snapshotId)} ${PRODUCT_COLUMNS}`);
    this.counted(FILE_HEAD);
  }

  /**
   * Makes the snapshot's partition as a table of its own, without indexes (they are built once,
   * when finish() attaches it: cheaper than keeping them up to date row by row), and starts the
   * COPY into it. Inside the caller's transaction: a rollback takes the table away too.
   */
  static async start(
    client: pg.ClientBase,
    snapshotId: string,
    fetchedAt: string,
    previous: PreviousRecords | undefined,
  ): Promise<DatabaseSnapshotWriter> {
    const table = productsPartition(snapshotId);
    const lz4 = await hasLz4(client);
    // The CHECK spares ATTACH PARTITION its scan for rows outside the partition's value.
    await client.query(
      `CREATE TABLE ${table} (LIKE catalog_products INCLUDING DEFAULTS,
         CHECK (snapshot_id = ${snapshotId})) ${lz4 ? "" : "WITH (toast_tuple_target = 8160)"}`,
    );
    if (lz4) await client.query(`ALTER TABLE ${table} ALTER COLUMN record SET COMPRESSION lz4`);
    return new DatabaseSnapshotWriter(client, snapshotId, fetchedAt, previous);
  }

  /**
   * Adds one page of products (as SnapshotWriter.add: the same problems, digests and diff).
   * `text` is the page's products as received (FetchedPage.text): each record is sent as its
   * bytes there; without it (or when it does not split into the products) they are serialised.
   */
  async add(page: readonly RawProduct[], text?: Uint8Array): Promise<void> {
    if (page.length === 0) return;
    // As ProductsFileWriter.appendPage writes it.
    const pageText = text
      ? Buffer.from(text.buffer, text.byteOffset, text.byteLength)
      : Buffer.from(page.map(stringify).join(","), "utf8");
    this.counted(this.productCount === 0 ? pageText : [FILE_SEPARATOR, pageText]);
    const slices = recordSlices(pageText, page.length);
    const escaped = slices !== undefined && needsCopyEscapes(pageText);
    const lines = new CopyLines(pageText.length + page.length * 1024);
    page.forEach((product, i) => {
      const fields = this.fields(product);
      const slice = slices?.[i];
      if (slice) lines.add(fields, escaped ? copyBytes(slice) : slice);
      else lines.add(fields + copyJson(JSON.stringify(product)));
    });
    await this.copy.write(lines.bytes());
  }

  /** A product's checks, counts and diff; its COPY fields but the record, each with its tab. */
  private fields(product: RawProduct): string {
    const { indexed, digest, repeated } = this.tally.add(product);
    if (repeated) this.repeated.add(product.code);
    else if (digest !== null) this.digestLines.add(digestLine(product.code, digest));
    const position = this.productCount++;
    const denominations = denominationsOf(product);
    const fixed = denominations?.type === "fixed" ? denominations.list : null;
    const open = denominations?.type === "open" ? denominations : undefined;
    const countries = asStringList(product.countries_redeemable_in);
    return `${[
      this.snapshotId,
      String(position),
      copyField(product.code),
      copyField(asString(product.name)),
      copyField(asString(product.currency)),
      copyField(asString(product.payout_type)),
      copyField(asString(product.state)),
      copyField(asString(product.availability)),
      product.is_orderable === true ? "t" : "f",
      copyTextArray(countries ? [...countries].sort() : []),
      copyTextArray(fixed),
      copyField(open && DECIMAL.test(open.min) ? open.min : null),
      copyField(open && DECIMAL.test(open.max) ? open.max : null),
      copyJson(`[${indexed.map((item) => item.text).join(",")}]`),
      copyField(digest),
    ].join("\t")}\t`;
  }

  /** Ends the COPY, attaches the partition and returns the manifest and diff of what was written. */
  async finish(meta: ManifestMeta): Promise<{ manifest: SnapshotManifest; diff: CatalogDiff }> {
    await this.copy.finish();
    this.counted(FILE_TAIL);
    await markSuperseded(this.client, this.snapshotId, this.repeated);
    await attachPartition(this.client, this.snapshotId);
    await this.client.query("UPDATE catalog_snapshots SET digests = $2 WHERE id = $1", [
      this.snapshotId,
      this.digestLines.bytes().toString("utf8"),
    ]);
    const manifest = this.tally.manifest(meta, this.fetchedAt, {
      productCount: this.productCount,
      sha256: this.hash.digest("hex"),
      bytes: this.bytes,
    });
    return { manifest, diff: await this.tally.finishDiff(meta.snapshot) };
  }

  abort(): void {
    this.copy.abort();
  }

  /** Adds bytes of the products.json this snapshot would be to the checksum and byte count. */
  private counted(bytes: Buffer | Buffer[]): void {
    for (const part of Array.isArray(bytes) ? bytes : [bytes]) {
      this.hash.update(part);
      this.bytes += part.length;
    }
  }
}

/**
 * Most rows (a record of 1.5 kB and its index entries) are over 2 kB, past which PostgreSQL
 * compresses the record; its usual compression (pglz) cost more CPU than the rest of the COPY
 * (docs/catalog-database.md, "Tables"). With lz4 (when the server has it) the cost is small
 * and the rows stay small; without it, rows are kept whole (a third more room).
 */
async function hasLz4(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ lz4: boolean }>(
    `SELECT 'lz4' = ANY(enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`,
  );
  return rows[0]?.lz4 === true;
}

function stringify(product: RawProduct): string {
  return JSON.stringify(product);
}

/**
 * Of a code the service sent more than once, every row but the last is superseded: as in the
 * file index, the last one received is the product (current_products shows it alone).
 */
async function markSuperseded(
  client: pg.ClientBase,
  snapshotId: string,
  codes: ReadonlySet<string>,
): Promise<void> {
  if (codes.size === 0) return;
  const table = productsPartition(snapshotId);
  await client.query(
    `UPDATE ${table} p SET superseded = true
       FROM (SELECT code, max(position) AS last FROM ${table}
              WHERE code = ANY($1::text[]) GROUP BY code) l
      WHERE p.code = l.code AND p.position < l.last`,
    [[...codes]],
  );
}

/**
 * Attaches the loaded partition (its indexes are built then, once) and gathers the planner's
 * figures for it, so that the views' queries are planned well at once.
 */
async function attachPartition(client: pg.ClientBase, snapshotId: string): Promise<void> {
  const table = productsPartition(snapshotId);
  // Room to build the partition's indexes (the GIN of countries above all) in memory; no
  // parallel workers: for 100,000 rows starting them cost more than they saved (0.28 s
  // against 0.32 s for the three indexes, on two cores).
  await client.query("SET LOCAL maintenance_work_mem = '256MB'");
  await client.query("SET LOCAL max_parallel_maintenance_workers = 0");
  await client.query(
    `ALTER TABLE catalog_products ATTACH PARTITION ${table} FOR VALUES IN (${snapshotId})`,
  );
  // A sample of 3,000 rows rather than 30,000, of the columns queries filter on (not the
  // records' jsonb and text): a twentieth of the time, and enough to choose between the
  // indexes. snapshot_id above all: without its figures the planner takes the primary key for
  // a way to find the snapshot's rows, and reads all of it.
  await client.query("SET LOCAL default_statistics_target = 10");
  await client.query(
    `ANALYZE ${table} (snapshot_id, position, code, name, currency, payout_type, state,
       availability, is_orderable, countries, denominations, min_value, max_value, superseded)`,
  );
}
