import { type FileHandle, open } from "node:fs/promises";

/** Appends lines to a file a batch at a time (records.ndjson). */
export class LinesFileWriter {
  private constructor(private readonly handle: FileHandle) {}

  static async create(path: string): Promise<LinesFileWriter> {
    return new LinesFileWriter(await open(path, "w"));
  }

  async append(lines: readonly string[]): Promise<void> {
    if (lines.length > 0) await this.handle.write(`${lines.join("\n")}\n`);
  }

  async finish(): Promise<void> {
    await this.handle.sync();
    await this.handle.close();
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
