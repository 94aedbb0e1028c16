import type { Readable } from "node:stream";
import { unzipGuard } from "./xlsx-workbook.js";
import { fixZipEntriesEnd } from "./zip-entries-end.js";
import type { UnzipGuard } from "./zip-limits.js";

/** How a spreadsheet's zip is opened, and how its reader's failures are said. */
interface ZipSheetOpening {
  /** The file as messages name it. */
  label: string;
  maxUnzippedBytes?: number | undefined;
  /** The reader's failure in one line, naming `label` (.xlsx and .ods each say theirs). */
  failed: (label: string, error: unknown) => Error;
}

/**
 * The zip of an .xlsx or .ods file opened for `read`, guarded (zip-limits.ts): its directory
 * checked against the size and ratio limits before a byte is unzipped, then the bytes counted
 * as they are (docs/architecture/import.md, "Spreadsheets"). `read` gets the guarded stream of
 * the file; an error it throws is the guard's refusal when a limit stopped it, else `failed`'s
 * line. The guard is closed however the reading ends. Answers what `read` returns.
 */
export async function* readZipSheet<T, R>(
  path: string,
  { label, maxUnzippedBytes, failed }: ZipSheetOpening,
  read: (source: Readable) => AsyncGenerator<T, R>,
): AsyncGenerator<T, R> {
  fixZipEntriesEnd();
  let guard: UnzipGuard;
  try {
    guard = await unzipGuard(path, label, maxUnzippedBytes);
  } catch (error) {
    throw failed(label, error);
  }
  try {
    return yield* read(guard.open(path));
  } catch (error) {
    // Stopped by the guard: the reader throws whatever its stream said; the refusal is the reason.
    throw guard.failure ?? failed(label, error);
  } finally {
    await guard.close();
  }
}
