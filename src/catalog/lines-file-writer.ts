import { StreamedFile } from "./durable-files.js";

/** Appends lines to a file a batch at a time (records.ndjson, digests.txt). */
export class LinesFileWriter {
  private constructor(private readonly file: StreamedFile) {}

  static async create(path: string): Promise<LinesFileWriter> {
    return new LinesFileWriter(await StreamedFile.create(path));
  }

  async append(lines: readonly string[]): Promise<void> {
    if (lines.length > 0) await this.file.write(`${lines.join("\n")}\n`);
  }

  finish(): Promise<void> {
    return this.file.finish();
  }

  abort(): Promise<void> {
    return this.file.abort();
  }
}
