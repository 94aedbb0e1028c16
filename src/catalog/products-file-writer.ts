import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";

/**
 * Streams `products.json` to disk: a JSON array with one product per line, so `jq` reads it
 * whole and giftjobs reads it line by line (JSON.stringify never emits a raw newline). Only the
 * page being written is in memory; the sha256 is computed over the bytes as they are written.
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
    await writer.write("[\n");
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

  /** Appends products; resolves once the bytes are handed to the file system. */
  async append(products: readonly unknown[]): Promise<void> {
    if (products.length === 0) return;
    const parts: string[] = [];
    for (const product of products) {
      parts.push(this.count === 0 ? "" : ",\n", JSON.stringify(product));
      this.count += 1;
    }
    await this.write(parts.join(""));
  }

  /** Closes the array, flushes the file to disk and returns the sha256 of its content. */
  async finish(): Promise<{ sha256: string; bytes: number }> {
    await this.write("\n]\n");
    await this.handle.sync();
    await this.handle.close();
    return { sha256: this.hash.digest("hex"), bytes: this.bytesWritten };
  }

  /** Closes without finishing (a failed sync). */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  private async write(text: string): Promise<void> {
    const buffer = Buffer.from(text, "utf8");
    this.hash.update(buffer);
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
    this.bytesWritten += buffer.length;
  }
}
