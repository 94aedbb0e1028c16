import { join } from "node:path";
import type { RawProduct } from "../api/schemas.js";
import type { CatalogDiff } from "./catalog-diff.js";
import { writeFileSynced } from "./durable-files.js";
import type { IndexedEntry } from "./index-entry.js";
import { IndexFileWriter } from "./index-file-writer.js";
import { LinesFileWriter } from "./lines-file-writer.js";
import type { PreviousRecords } from "./previous-records.js";
import { ProductsFileWriter } from "./products-file-writer.js";
import { DIGESTS_HEADER, digestLine } from "./record-digest.js";
import { SNAPSHOT_FILES } from "./snapshot-layout.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";
import { type ManifestMeta, SnapshotTally } from "./snapshot-tally.js";

/**
 * Writes one snapshot into a (temporary) directory as pages arrive: products.json, index.json,
 * records.ndjson (the records not in index.json) and digests.txt (every product's record digest)
 * are streamed; counts, warnings and the diff are kept as running totals (SnapshotTally).
 * finish() adds manifest.json and diff.json; everything is flushed to disk before it returns.
 */
export class SnapshotWriter {
  private constructor(
    private readonly dir: string,
    private readonly fetchedAt: string,
    private readonly products: ProductsFileWriter,
    private readonly index: IndexFileWriter,
    private readonly records: LinesFileWriter,
    private readonly digests: LinesFileWriter,
    private readonly tally: SnapshotTally,
  ) {}
  static async create(
    dir: string,
    fetchedAt: string,
    previous: PreviousRecords | undefined,
  ): Promise<SnapshotWriter> {
    // Opened one after another so that, when one fails, those already open can be closed.
    const opened: { abort(): Promise<void> }[] = [];
    const track = async <W extends { abort(): Promise<void> }>(pending: Promise<W>): Promise<W> => {
      const writer = await pending;
      opened.push(writer);
      return writer;
    };
    try {
      const products = await track(ProductsFileWriter.create(join(dir, SNAPSHOT_FILES.products)));
      const index = await track(IndexFileWriter.create(join(dir, SNAPSHOT_FILES.index), fetchedAt));
      const records = await track(LinesFileWriter.create(join(dir, SNAPSHOT_FILES.records)));
      const digests = await track(LinesFileWriter.create(join(dir, SNAPSHOT_FILES.digests)));
      await digests.append([DIGESTS_HEADER]);
      const tally = new SnapshotTally(previous);
      return new SnapshotWriter(dir, fetchedAt, products, index, records, digests, tally);
    } catch (error) {
      await Promise.all(opened.map((writer) => writer.abort()));
      throw error;
    }
  }

  get productCount(): number {
    return this.products.products;
  }

  /** Bytes of products.json so far: where a resumed sync truncates it back to. */
  get productBytes(): number {
    return this.products.bytes;
  }

  /**
   * Adds one page of products, kept exactly as received: `text` is the page's products on one
   * line as they should be stored (FetchedPage.text); without it they are serialised.
   */
  async add(page: readonly RawProduct[], text?: Uint8Array): Promise<void> {
    const entries: IndexedEntry[] = [];
    const lines: string[] = [];
    const digests: string[] = [];
    for (const product of page) {
      const { indexed, record, ownLine, digest } = this.tally.add(product);
      if (digest !== null) {
        if (ownLine) lines.push(record);
        digests.push(digestLine(product.code, digest));
      }
      for (const item of indexed) entries.push(item);
    }
    await Promise.all([
      this.products.appendPage(page, text),
      this.index.append(entries),
      this.records.append(lines),
      this.digests.append(digests),
    ]);
  }

  /** Completes every file and flushes it; the directory is then ready to be renamed. */
  async finish(meta: ManifestMeta): Promise<{ manifest: SnapshotManifest; diff: CatalogDiff }> {
    const [{ sha256, bytes }] = await Promise.all([
      this.products.finish(),
      this.index.finish(),
      this.records.finish(),
      this.digests.finish(),
    ]);
    const manifest = this.tally.manifest(meta, this.fetchedAt, {
      productCount: this.products.products,
      sha256,
      bytes,
    });
    const diff = await this.tally.finishDiff(meta.snapshot);
    await writeFileSynced(
      join(this.dir, SNAPSHOT_FILES.manifest),
      `${JSON.stringify(manifest, null, 2)}\n`,
    );
    await writeFileSynced(
      join(this.dir, SNAPSHOT_FILES.diff),
      `${JSON.stringify(diff, null, 2)}\n`,
    );
    return { manifest, diff };
  }

  async abort(): Promise<void> {
    await Promise.all([
      this.products.abort(),
      this.index.abort(),
      this.records.abort(),
      this.digests.abort(),
    ]);
  }
}
