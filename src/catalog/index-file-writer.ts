import { type FileHandle, open } from "node:fs/promises";
import { BackgroundFlush } from "./durable-files.js";
import type { IndexedEntry } from "./index-entry.js";

/**
 * Streams `index.json` (a CatalogIndex) to disk page by page: `{"fetched_at":…,"entries":{` then
 * one `"code":{…}` per line. A code seen twice is written twice; JSON.parse keeps the last, as a
 * Map would, and the sync reports the duplicate as a warning.
 */
export class IndexFileWriter {
  private first = true;
  private readonly flush: BackgroundFlush;

  private constructor(private readonly handle: FileHandle) {
    this.flush = new BackgroundFlush(handle);
  }

  static async create(path: string, fetchedAt: string): Promise<IndexFileWriter> {
    const handle = await open(path, "w");
    try {
      await handle.write(`{"fetched_at":${JSON.stringify(fetchedAt)},"entries":{\n`);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    return new IndexFileWriter(handle);
  }

  async append(entries: readonly IndexedEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const parts: string[] = [];
    for (const { entry, text } of entries) {
      parts.push(this.first ? "" : ",\n", JSON.stringify(entry.code), ":", text);
      this.first = false;
    }
    const text = parts.join("");
    await this.handle.write(text);
    // Characters, not bytes: near enough to decide when to flush.
    this.flush.wrote(text.length);
  }

  async finish(): Promise<void> {
    await this.handle.write("\n}}\n");
    await this.flush.settle();
    await this.handle.sync();
    await this.handle.close();
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
