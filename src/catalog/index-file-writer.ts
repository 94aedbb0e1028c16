import { StreamedFile } from "./durable-files.js";
import type { IndexedEntry } from "./index-entry.js";

/**
 * Streams `index.json` (a CatalogIndex) to disk page by page: `{"fetched_at":…,"entries":{` then
 * one `"code":{…}` per line. A code seen twice is written twice; JSON.parse keeps the last, as a
 * Map would, and the sync reports the duplicate as a warning.
 */
export class IndexFileWriter {
  private first = true;

  private constructor(private readonly file: StreamedFile) {}

  static async create(path: string, fetchedAt: string): Promise<IndexFileWriter> {
    const head = `{"fetched_at":${JSON.stringify(fetchedAt)},"entries":{\n`;
    return new IndexFileWriter(await StreamedFile.create(path, head));
  }

  async append(entries: readonly IndexedEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const parts: string[] = [];
    for (const { entry, text } of entries) {
      parts.push(this.first ? "" : ",\n", JSON.stringify(entry.code), ":", text);
      this.first = false;
    }
    await this.file.write(parts.join(""));
  }

  async finish(): Promise<void> {
    await this.file.write("\n}}\n");
    await this.file.finish();
  }

  abort(): Promise<void> {
    return this.file.abort();
  }
}
