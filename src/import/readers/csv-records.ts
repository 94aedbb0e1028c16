import { createReadStream } from "node:fs";
import { type Readable, Transform } from "node:stream";
import { type Parser, parse } from "csv-parse";

/**
 * A legitimate row is a few KB at most (description 128, metadata 20 x 200); the cap keeps an
 * unclosed quote from pulling the rest of a large file into memory before failing.
 */
export const MAX_RECORD_CHARS = 1_000_000;

/** A record as the parser gave it, with the physical line it starts on. */
export interface ParsedRecord {
  line: number;
  cells: string[];
  /** Bytes of the input parsed up to the end of this record. */
  bytes: number;
}

/** How a CSV's text is parsed into records: what csv-rows.ts reads and csv-records-worker.ts runs. */
export interface RecordReading {
  /** One character, checked by the caller. */
  delimiter: string;
  /** The text's encoding, when not UTF-8: UTF-16 with a BOM. */
  encoding?: "utf-16le" | "utf-16be" | undefined;
}

/** A file's records in batches, wherever they are parsed (here or in a worker thread). */
export interface RecordSource {
  batches: AsyncGenerator<ParsedRecord[]>;
  /** The line after the last record parsed: where a parse error is named. */
  failedLine(): number;
  /** Stops the reading; the source is not read again. */
  close(): Promise<void>;
}

const LINE_BREAK = /\r\n|\r|\n/g;

function lineBreaks(cells: readonly string[]): number {
  let count = 0;
  for (const cell of cells) {
    // Most cells hold no line break: two scans cost less than a regex match a cell.
    if (cell.indexOf("\n") === -1 && cell.indexOf("\r") === -1) continue;
    count += cell.match(LINE_BREAK)?.length ?? 0;
  }
  return count;
}

/**
 * Physical line numbers of records. csv-parse's own `info.lines` counts a CRLF inside a quoted
 * field as two lines, so lines are counted here from the cells' own line breaks: a record spans
 * 1 + its embedded breaks. Blank lines are records too (the parser does not skip them), counted
 * like any other and left out by the reader.
 */
class LineTracker {
  private next = 1;

  /** The line the record about to be read starts on. */
  peek(): number {
    return this.next;
  }

  /** Accounts for a record; returns the line it starts on. */
  take(cells: readonly string[]): number {
    const start = this.next;
    this.next = start + lineBreaks(cells) + 1;
    return start;
  }
}

/** UTF-16 text decoded to UTF-8 for the parser, its BOM left out (TextDecoder's default). */
function utf16Text(encoding: "utf-16le" | "utf-16be"): Transform {
  const decoder = new TextDecoder(encoding);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, decoder.decode(chunk, { stream: true }));
    },
    flush(done) {
      done(null, decoder.decode());
    },
  });
}

/** The records of a CSV (a path, or a stream of its bytes), parsed in this thread. */
export function readRecords(input: Readable | string, reading: RecordReading): RecordSource {
  const raw = typeof input === "string" ? createReadStream(input) : input;
  const source = reading.encoding === undefined ? raw : raw.pipe(utf16Text(reading.encoding));
  const lines = new LineTracker();
  const parser = parse({
    bom: true,
    delimiter: reading.delimiter,
    relax_column_count: true,
    relax_quotes: true,
    // Blank lines come as records ([""]): counted as lines, left out by the reader.
    skip_empty_lines: false,
    max_record_size: MAX_RECORD_CHARS,
  });
  raw.on("error", (error: Error) => parser.destroy(error));
  if (source !== raw) source.on("error", (error: Error) => parser.destroy(error));
  source.pipe(parser);
  return {
    batches: parsedRecords(parser, lines),
    failedLine: () => lines.peek(),
    close: async () => {
      parser.destroy();
      if (source !== raw) source.destroy();
      if (typeof input === "string") raw.destroy();
      else raw.unpipe();
    },
  };
}

/** Records buffered before the reader pauses the parser: a few batches of the import's. */
const RECORDS_BUFFERED = 2000;

/**
 * The parser's records, as many as it gave since the last were read, each given its line as it
 * is parsed, not as it is read: when parsing fails, the error names the line after the last
 * record parsed, though records parsed before it may not have been read yet. (csv-parse's
 * `on_record` would do the same, but builds two info objects a record: as much CPU as the parse
 * itself, measured on 400,000 rows.)
 */
async function* parsedRecords(parser: Parser, lines: LineTracker): AsyncGenerator<ParsedRecord[]> {
  const queue: ParsedRecord[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  parser.on("data", (cells: string[]) => {
    queue.push({ line: lines.take(cells), cells, bytes: parser.info.bytes });
    if (queue.length >= RECORDS_BUFFERED) parser.pause();
    signal();
  });
  parser.once("end", () => {
    ended = true;
    signal();
  });
  parser.once("error", (error: unknown) => {
    failure = error;
    signal();
  });
  for (;;) {
    if (queue.length > 0) {
      yield queue.splice(0);
      continue;
    }
    if (failure !== undefined) throw failure;
    if (ended) return;
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    parser.resume();
    await woken;
  }
}
