import { createHash, type Hash } from "node:crypto";
import { StreamedFile } from "./durable-files.js";

const HEAD = Buffer.from("[\n");
const SEPARATOR = Buffer.from(",\n");
const TAIL = Buffer.from("\n]\n");

/**
 * Streams `products.json` to disk: a JSON array with one page of products per line, so `jq`
 * reads it whole and giftjobs reads it a line at a time (a page's text as received, when it is
 * on one line, has no raw newline, and neither has JSON.stringify's). Only the page being
 * written is in memory; the sha256 is computed over the bytes as they are written.
 *
 * Layout: `[\n` + pages joined by `,\n` + `\n]\n`, where a page is its products joined by `,`.
 * Files written before pages were kept whole have one product per line: the same layout with
 * one-product pages, and readProductsFile reads both.
 */
export class ProductsFileWriter {
  private readonly hash: Hash = createHash("sha256");
  private count = 0;
  private bytesWritten = 0;

  private constructor(private readonly file: StreamedFile) {
    this.counted([HEAD]);
  }

  static async create(path: string): Promise<ProductsFileWriter> {
    return new ProductsFileWriter(await StreamedFile.create(path, HEAD));
  }

  /** Products written so far. */
  get products(): number {
    return this.count;
  }

  /** Bytes written so far: a checkpoint truncates the file back to this length to resume. */
  get bytes(): number {
    return this.bytesWritten;
  }

  /**
   * Appends a page of products as one line; resolves once the bytes are handed to the file
   * system. `text` is the page as it should be stored, the products' JSON texts joined by
   * commas on one line (FetchedPage.text); without it the products are serialised.
   */
  async appendPage(products: readonly unknown[], text?: Uint8Array): Promise<void> {
    if (products.length === 0) return;
    const line = text ?? Buffer.from(products.map((p) => JSON.stringify(p)).join(","), "utf8");
    const first = this.count === 0;
    this.count += products.length;
    // One write for the separator and the page: one trip to the thread pool per page.
    await this.write(first ? [line] : [SEPARATOR, line]);
  }

  /** Closes the array, flushes the file to disk and returns the sha256 of its content. */
  async finish(): Promise<{ sha256: string; bytes: number }> {
    await this.write([TAIL]);
    await this.file.finish();
    return { sha256: this.hash.digest("hex"), bytes: this.bytesWritten };
  }

  /** Closes without finishing (a failed sync). */
  abort(): Promise<void> {
    return this.file.abort();
  }

  private async write(buffers: Uint8Array[]): Promise<void> {
    this.counted(buffers);
    await this.file.write(buffers);
  }

  /** Adds bytes about to be written to the sha256 and the byte count. */
  private counted(buffers: readonly Uint8Array[]): void {
    for (const buffer of buffers) {
      this.hash.update(buffer);
      this.bytesWritten += buffer.length;
    }
  }
}
