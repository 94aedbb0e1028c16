import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";

const SEPARATOR = Buffer.from(",\n");

/**
 * Streams `products.json` to disk: a JSON array with one product per line, so `jq` reads it
 * whole and giftjobs reads it line by line (neither JSON.stringify nor a product's text as
 * received, when it is on one line, has a raw newline). Only the page being written is in
 * memory; the sha256 is computed over the bytes as they are written.
 *
 * Layout: `[\n` + products joined by `,\n` + `\n]\n`.
 */
export class ProductsFileWriter {
  private readonly hash: Hash = createHash("sha256");
  private count = 0;
  private bytesWritten = 0;

  private constructor(private readonly handle: FileHandle) {}

  static async create(path: string): Promise<ProductsFileWriter> {
    const writer = new ProductsFileWriter(await open(path, "w"));
    await writer.write(Buffer.from("[\n"));
    return writer;
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
   * Appends products; resolves once the bytes are handed to the file system. `raw` holds each
   * product's JSON text as received, written byte for byte instead of JSON.stringify(product)
   * where given; it must be that product's text on one line (catalogSlices makes sure).
   */
  async append(
    products: readonly unknown[],
    raw?: readonly (Uint8Array | undefined)[],
  ): Promise<void> {
    if (products.length === 0) return;
    if (!raw) {
      const parts: string[] = [];
      for (const product of products) {
        parts.push(this.count === 0 ? "" : ",\n", JSON.stringify(product));
        this.count += 1;
      }
      await this.write(Buffer.from(parts.join(""), "utf8"));
      return;
    }
    const parts: Uint8Array[] = [];
    for (let i = 0; i < products.length; i++) {
      if (this.count > 0) parts.push(SEPARATOR);
      parts.push(raw[i] ?? Buffer.from(JSON.stringify(products[i]), "utf8"));
      this.count += 1;
    }
    await this.write(Buffer.concat(parts));
  }

  /** Closes the array, flushes the file to disk and returns the sha256 of its content. */
  async finish(): Promise<{ sha256: string; bytes: number }> {
    await this.write(Buffer.from("\n]\n"));
    await this.handle.sync();
    await this.handle.close();
    return { sha256: this.hash.digest("hex"), bytes: this.bytesWritten };
  }

  /** Closes without finishing (a failed sync). */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  private async write(buffer: Buffer): Promise<void> {
    this.hash.update(buffer);
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
    this.bytesWritten += buffer.length;
  }
}
