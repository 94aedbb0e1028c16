import { join } from "node:path";
import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { READER_OPTIONS } from "../../../src/import/readers/xlsx-workbook.js";
import { fixZipEntriesEnd } from "../../../src/import/readers/zip-entries-end.js";
import { tmpDir } from "../../helpers/tmp-dir.js";
import { xlsxFile } from "../../helpers/xlsx.js";

interface ReaderEvent {
  eventType?: string;
  value?: { iterator: { on?: (event: string, f: () => void) => void } };
}

/** Reads `path` with exceljs's streaming reader as the import does, taking each shared string 20 ms late. */
async function readSlowly(path: string): Promise<{ sheets: string[] | undefined }> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, READER_OPTIONS);
  const events = (reader as unknown as { parse(): AsyncIterable<ReaderEvent> }).parse();
  for await (const event of events) {
    if (event.eventType === undefined) await new Promise((r) => setTimeout(r, 20));
    // Its temporary file is removed unread: see SheetFiles in src/import/readers/xlsx-workbook.ts.
    if (event.eventType === "worksheet") event.value?.iterator.on?.("error", () => {});
  }
  const model = (reader as unknown as { model?: { sheets?: { name: string }[] } }).model;
  return { sheets: model?.sheets?.map((s) => s.name) };
}

describe("the zip entries exceljs reads (fixZipEntriesEnd)", () => {
  it("every entry is read, the last one too, when the reader is slow to take an event before it", async () => {
    // exceljs writes xl/workbook.xml (the sheets' names) as the zip's last entry.
    const file = await xlsxFile(join(await tmpDir("zip-end"), "two.xlsx"), {
      Notes: [["just notes"]],
      Orders: [["email"], ["a@example.com"]],
    });
    fixZipEntriesEnd();
    for (let i = 0; i < 5; i++) {
      // Without the fix the read fails at the first sheet: exceljs never saw xl/workbook.xml.
      expect(await readSlowly(file)).toEqual({ sheets: ["Notes", "Orders"] });
    }
  });
});
