// The floor of the import bench (docs/benchmarks.md, "Benchmarks"): the work an import of a CSV cannot
// avoid, and nothing else. csv-parse of the file; two sha256 a row (its identity and its order's
// key); one journal line and one paid-memory line a row, appended to two files and flushed a
// chunk at a time; each row written to Redis with HSET, pipelined a chunk of 1,000 at a time,
// one chunk in flight. No validation, no pricing, no lookup.
import { createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse";
import type { Redis } from "ioredis";
import { sha256 } from "../../src/sha256.js";

const CHUNK = 1000;

export interface FloorOptions {
  redis: Redis;
  /** Where the rows' hash goes: `<prefix>:floor:rows`. */
  prefix: string;
  /** Where the two files are written (journal.ndjson, paid.ndjson). */
  dir: string;
  campaign: string;
}

/** One chunk of rows as the floor writes them. */
class FloorChunk {
  journal = "";
  paid = "";
  fields: string[] = [];
  rows = 0;

  add(campaign: string, cells: string[], line: number): void {
    const identity = sha256(JSON.stringify([campaign, cells]));
    const key = sha256(JSON.stringify([campaign, 0, [identity]]));
    this.journal += `${JSON.stringify({ g: 0, k: key, i: [identity] })}\n`;
    this.paid += `${JSON.stringify([identity, line, cells[2]])}\n`;
    this.fields.push(identity, JSON.stringify([line, ...cells]));
    this.rows += 1;
  }
}

/** Appends `text` and flushes it, as the journal and the paid memory are before Redis hears. */
async function appendFlushed(handle: FileHandle, text: string): Promise<void> {
  await handle.write(text);
  await handle.datasync();
}

async function writeChunk(
  chunk: FloorChunk,
  files: { journal: FileHandle; paid: FileHandle },
  { redis, prefix }: FloorOptions,
): Promise<void> {
  await Promise.all([
    appendFlushed(files.journal, chunk.journal),
    appendFlushed(files.paid, chunk.paid),
  ]);
  const pipeline = redis.pipeline();
  const key = `${prefix}:floor:rows`;
  for (let i = 0; i < chunk.fields.length; i += 2)
    pipeline.hset(key, chunk.fields[i]!, chunk.fields[i + 1]!);
  await pipeline.exec();
}

/** Runs the floor over `file` (a header line, then rows); returns the rows written. */
export async function importFloor(file: string, options: FloorOptions): Promise<number> {
  const journal = await open(join(options.dir, "journal.ndjson"), "a");
  const paid = await open(join(options.dir, "paid.ndjson"), "a");
  let rows = 0;
  try {
    let chunk = new FloorChunk();
    const parser = createReadStream(file).pipe(parse({ from_line: 2 }));
    for await (const cells of parser as AsyncIterable<string[]>) {
      rows += 1;
      chunk.add(options.campaign, cells, rows + 1);
      if (chunk.rows < CHUNK) continue;
      await writeChunk(chunk, { journal, paid }, options);
      chunk = new FloorChunk();
    }
    if (chunk.rows > 0) await writeChunk(chunk, { journal, paid }, options);
  } finally {
    await journal.close();
    await paid.close();
  }
  return rows;
}
