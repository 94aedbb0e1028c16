import { createRequire } from "node:module";

/** unzipper's Parse stream, as much of it as fixZipEntriesEnd touches. */
interface ParseStream {
  listeners(event: "finish"): ((...args: unknown[]) => void)[];
  removeListener(event: "finish", listener: (...args: unknown[]) => void): void;
  on(event: "finish", listener: () => void): void;
  push(chunk: null): boolean;
}

type ParseFactory = (options?: object) => ParseStream;

let fixed = false;

/**
 * exceljs 4.4 reads an .xlsx zip through unzipper 0.10's Parse stream, and stops at its 'end'.
 * Parse emits 'end' itself as soon as the whole file has been written to it, while the entries
 * it has parsed can still wait in its buffer (paused, because exceljs is busy with an entry
 * before them). exceljs then never sees those last entries: for a workbook saved with
 * xl/workbook.xml last (exceljs's own writer, and others), the sheets have no names and the
 * read fails now and then ("Cannot read properties of undefined (reading 'sheets')"); a
 * sheet or the shared strings saved last would be missed the same way.
 *
 * This replaces that early 'end' by the end of the stream's data (`push(null)`, which Parse
 * also does at the zip's end record): the stream ends once every parsed entry has been read.
 * It wraps `Parse` on the unzipper module exceljs itself requires (it looks `Parse` up on each
 * read), once per process. Another version that no longer has that listener is left alone.
 */
export function fixZipEntriesEnd(): void {
  if (fixed) return;
  fixed = true;
  const fromExceljs = createRequire(createRequire(import.meta.url).resolve("exceljs"));
  const unzipper = fromExceljs("unzipper") as { Parse: ParseFactory };
  const parse = unzipper.Parse;
  unzipper.Parse = function fixedParse(options?: object): ParseStream {
    const stream = parse(options);
    const early = stream.listeners("finish").find((f) => /emit\(['"]end['"]\)/.test(String(f)));
    if (early) {
      stream.removeListener("finish", early);
      stream.on("finish", () => stream.push(null));
    }
    return stream;
  };
}
