// A worker thread's entry (csv-records-thread.ts): parses a CSV file's records with
// readRecords, as the import's own thread would, and posts them a batch at a time, each once
// the importer has asked for one more: it is never more than a few batches ahead of the import.
import { parentPort, workerData } from "node:worker_threads";
import { CsvError } from "csv-parse";
import { type RecordReading, readRecords } from "./csv-records.js";
import type { RecordMessage } from "./csv-records-thread.js";

const { path, reading } = workerData as { path: string; reading: RecordReading };
const port = parentPort!;
let credit = 0;
let wake: (() => void) | undefined;
port.on("message", () => {
  credit += 1;
  wake?.();
});

function post(message: RecordMessage): void {
  port.postMessage(message);
}

const source = readRecords(path, reading);
try {
  for await (const records of source.batches) {
    while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
    credit -= 1;
    // Columns, not an object a record: less for the structured clone to write and read.
    post({
      kind: "records",
      cells: records.map((r) => r.cells),
      lines: records.map((r) => r.line),
      bytes: records.map((r) => r.bytes),
    });
  }
  post({ kind: "end" });
} catch (error) {
  const e = error as NodeJS.ErrnoException;
  post({
    kind: "failure",
    csv: error instanceof CsvError,
    code: typeof e.code === "string" ? e.code : undefined,
    message: e.message,
    line: source.failedLine(),
  });
} finally {
  await source.close();
  port.close();
}
