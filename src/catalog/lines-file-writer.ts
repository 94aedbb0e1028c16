import { type FileHandle, open } from "node:fs/promises";
import { BackgroundFlush } from "./durable-files.js";

/** Appends lines to a file a batch at a time (records.ndjson, digests.txt). */
export class LinesFileWriter {
  private readonly flush: BackgroundFlush;

  private constructor(private readonly handle: FileHandle) {
    this.flush = new BackgroundFlush(handle);
  }

  static async create(path: string): Promise<LinesFileWriter> {
    return new LinesFileWriter(await open(path, "w"));
  }

  async append(lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    const text = `${lines.join("\n")}\n`;
    await this.handle.write(text);
    // Characters, not bytes: near enough to decide when to flush.
    this.flush.wrote(text.length);
  }

  async finish(): Promise<void> {
    await this.flush.settle();
    await this.handle.sync();
    await this.handle.close();
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
