import { createHash, type Hash } from "node:crypto";
import type pg from "pg";
import type { RawProduct } from "../api/schemas.js";
import { CopyWriter, copyField, copyJson, copyTextArray } from "../db/copy-rows.js";
import { type CatalogDiff, DiffBuilder } from "./catalog-diff.js";
import { serialiseProduct } from "./compact-record.js";
import type { PreviousRecords } from "./previous-records.js";
import { catalogProductProblems } from "./product-check.js";
import { denominationsOf } from "./product-denominations.js";
import { asString, asStringList } from "./product-fields.js";
import { recordDigest } from "./record-digest.js";
import type { ProductWarning, SnapshotManifest } from "./snapshot-manifest.js";
import type { ManifestMeta } from "./snapshot-writer.js";

const PRODUCT_COLUMNS =
  "(snapshot_id, position, code, name, currency, payout_type, state, " +
  "availability, is_orderable, countries, denominations, min_value, max_value, record, " +
  "index_entries, digest)";

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
 * the index entries and the diff's digest. Counts, warnings and the diff are running totals, as
 * in SnapshotWriter, whose checks and diff this repeats product for product.
 */
export class DatabaseSnapshotWriter {
  private readonly byPayoutType: Record<string, number> = {};
  private readonly byCurrency: Record<string, number> = {};
  private readonly warnings: ProductWarning[] = [];
  private readonly diff: DiffBuilder;
  private readonly hash: Hash = createHash("sha256");
  private readonly copy: CopyWriter;
  private indexEntries = 0;
  private bytes = 0;
  productCount = 0;

  private constructor(
    private readonly client: pg.ClientBase,
    private readonly snapshotId: string,
    private readonly fetchedAt: string,
    previous: PreviousRecords | undefined,
  ) {
    this.diff = new DiffBuilder(previous);
    this.copy = CopyWriter.start(client, `${productsPartition(snapshotId)} ${PRODUCT_COLUMNS}`);
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
    // The CHECK spares ATTACH PARTITION its scan for rows outside the partition's value.
    await client.query(
      `CREATE TABLE ${table} (LIKE catalog_products INCLUDING DEFAULTS,
         CHECK (snapshot_id = ${snapshotId}))`,
    );
    return new DatabaseSnapshotWriter(client, snapshotId, fetchedAt, previous);
  }

  /** Adds one page of products (as SnapshotWriter.add: the same problems, digests and diff). */
  async add(page: readonly RawProduct[]): Promise<void> {
    let lines = "";
    for (const product of page) lines += this.line(product);
    await this.copy.write(lines);
  }

  private line(product: RawProduct): string {
    const problems = catalogProductProblems(product);
    const before = this.diff.see(product.code);
    if (before === undefined)
      problems.push(`code: appears more than once; the last one is indexed`);
    const { indexed, record } = serialiseProduct(product, problems);
    let digest: string | null = null;
    if (before !== undefined) {
      digest = recordDigest(record);
      this.diff.compare(product.code, product.name ?? null, before, digest, record);
    }
    if (problems.length > 0) this.warnings.push({ code: product.code, problems });
    count(this.byPayoutType, product.payout_type);
    count(this.byCurrency, product.currency);
    this.indexEntries += indexed.length;
    const text = JSON.stringify(product);
    this.hash.update(text);
    this.hash.update("\n");
    this.bytes += Buffer.byteLength(text) + 1;
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
      copyJson(text),
      copyJson(`[${indexed.map((item) => item.text).join(",")}]`),
      copyField(digest),
    ].join("\t")}\n`;
  }

  /** Ends the COPY and returns the manifest and diff of what was written. */
  async finish(meta: ManifestMeta): Promise<{ manifest: SnapshotManifest; diff: CatalogDiff }> {
    await this.copy.finish();
    const table = productsPartition(this.snapshotId);
    // Room to build the partition's indexes (the GIN of countries above all) in memory.
    await this.client.query("SET LOCAL maintenance_work_mem = '256MB'");
    await this.client.query(
      `ALTER TABLE catalog_products ATTACH PARTITION ${table} FOR VALUES IN (${this.snapshotId})`,
    );
    // The planner's figures for the new rows, so the views' queries are planned well at once.
    await this.client.query(`ANALYZE ${table}`);
    const manifest: SnapshotManifest = {
      snapshot: meta.snapshot,
      fetched_at: this.fetchedAt,
      api_version: meta.api_version,
      filters: meta.filters,
      product_count: this.productCount,
      index_entries: this.indexEntries,
      counts: { by_payout_type: this.byPayoutType, by_currency: this.byCurrency },
      pages: meta.pages,
      duration_ms: meta.duration_ms,
      sha256: this.hash.digest("hex"),
      products_bytes: this.bytes,
      warnings: this.warnings,
    };
    return { manifest, diff: await this.diff.finish(meta.snapshot) };
  }

  abort(): void {
    this.copy.abort();
  }
}

function count(counts: Record<string, number>, value: unknown): void {
  const key = typeof value === "string" && value !== "" ? value : "(none)";
  counts[key] = (counts[key] ?? 0) + 1;
}
