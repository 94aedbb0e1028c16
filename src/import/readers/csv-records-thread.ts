import { Worker } from "node:worker_threads";
import { CsvError, type CsvErrorCode } from "csv-parse";
import type { ParsedRecord, RecordReading, RecordSource } from "./csv-records.js";

/** What the worker (csv-records-worker.ts) posts: records, their end, or why it stopped. */
export type RecordMessage =
  | { kind: "records"; cells: string[][]; lines: number[]; bytes: number[] }
  | { kind: "end" }
  | {
      kind: "failure";
      /** A csv-parse error (a quote never closed, a record too long), else a read's. */
      csv: boolean;
      code: string | undefined;
      message: string;
      line: number;
    };

/** Batches the worker may parse ahead of the import: enough that the import never waits. */
const AHEAD = 3;

/**
 * The worker's entry beside this module, as it is run: `.ts` from the sources (tsx or vitest),
 * `.js` compiled by tsc, `.js` or `.mjs` bundled by esbuild, whose builds make the worker an
 * entry point of its own, csv-records-worker, beside their chunks (scripts/cli-bundle.mjs).
 */
function startWorker(workerData: unknown): Worker {
  const here = import.meta.url;
  const extension = here.slice(here.lastIndexOf("."));
  const entry = new URL(`./csv-records-worker${extension}`, here);
  const options = { workerData, resourceLimits: WORKER_LIMITS };
  if (extension !== ".ts") return new Worker(entry, options);
  // From the sources: the worker compiles its TypeScript with tsx, as `npm test` and tsx do.
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { ...options, eval: true });
}

/**
 * The parser holds a few thousand records at a time, so its young generation is kept small: at
 * V8's default the thread added some 20 MB to the peak RSS of the import bench's million rows
 * (one round each way), and the bench holds that peak to 1.5x its floor's.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/**
 * A CSV file's records parsed in a worker thread (csv-records-worker.ts), as readRecords parses
 * them in this one: csv-parse was a fifth of a big import's first pass, which runs on one core
 * of two (docs/architecture/import.md, "Parsing beside the checks").
 */
export function recordsInThread(path: string, reading: RecordReading): RecordSource {
  const worker = startWorker({ path, reading });
  let failedLine = 1;
  async function* batches(): AsyncGenerator<ParsedRecord[]> {
    const queue: RecordMessage[] = [];
    let stopped: Error | undefined;
    let wake: (() => void) | undefined;
    const signal = () => {
      wake?.();
      wake = undefined;
    };
    worker.on("message", (message: RecordMessage) => {
      queue.push(message);
      signal();
    });
    worker.once("error", (error) => {
      stopped = error;
      signal();
    });
    worker.once("exit", () => {
      stopped ??= new Error("the CSV parsing thread ended before the file did");
      signal();
    });
    for (let i = 0; i < AHEAD; i++) worker.postMessage(1);
    for (;;) {
      const message = queue.shift();
      if (message === undefined) {
        if (stopped) throw stopped;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (message.kind === "end") return;
      if (message.kind === "failure") {
        failedLine = message.line;
        throw failureOf(message);
      }
      worker.postMessage(1);
      yield recordsOf(message);
    }
  }
  return {
    batches: batches(),
    failedLine: () => failedLine,
    close: async () => {
      await worker.terminate();
    },
  };
}

function recordsOf({
  cells,
  lines,
  bytes,
}: {
  cells: string[][];
  lines: number[];
  bytes: number[];
}): ParsedRecord[] {
  const records: ParsedRecord[] = new Array(cells.length);
  for (let i = 0; i < cells.length; i++)
    records[i] = { line: lines[i]!, cells: cells[i]!, bytes: bytes[i]! };
  return records;
}

/** The worker's failure as the error this thread's parsing would have thrown. */
function failureOf(failure: Extract<RecordMessage, { kind: "failure" }>): Error {
  if (failure.csv) return new CsvError(failure.code as CsvErrorCode, failure.message);
  return Object.assign(new Error(failure.message), { code: failure.code });
}
