import type { Readable } from "node:stream";
import { UserError } from "../../errors/user-error.js";
import { nameList } from "../header/name-list.js";
import type { CsvItem } from "./csv-rows.js";
import { SharedStrings } from "./shared-strings.js";
import { type ReadSheetOptions, sheetItemBatches } from "./sheet-items.js";
import { type SheetSource, sheetRows } from "./xlsx-sheet-rows.js";
import {
  decodeSheet,
  nameSheets,
  READER_OPTIONS,
  type ReaderEvent,
  type ReaderModel,
  readSharedStrings,
  SheetFiles,
  sharedText,
  sheetPosition,
  tooManyStrings,
  workbookError,
  workbookReaderClass,
} from "./xlsx-workbook.js";
import { readZipSheet } from "./zip-sheet.js";

export type ReadXlsxRowsOptions = ReadSheetOptions;

/** Hidden from Excel's tabs: `state="hidden"` or `"veryHidden"` in xl/workbook.xml. */
function isHidden(sheet: { state?: string }): boolean {
  return sheet.state === "hidden" || sheet.state === "veryHidden";
}

/**
 * The sheet read when none is named: the workbook's first visible one, and the hidden sheets
 * skipped (docs/order-files.md, "Spreadsheets as exported"). A named sheet is read hidden or
 * not. A workbook whose sheets are all hidden is refused, listing them.
 */
function sheetChoice(
  model: ReaderModel,
  label: string,
  named: string | undefined,
): { first: string | undefined; hidden: string[]; count: number } {
  const sheets = model.model?.sheets ?? [];
  const count = sheets.length;
  if (named !== undefined) return { first: named, hidden: [], count };
  const hidden = sheets.filter(isHidden).map((s) => s.name);
  const first = sheets.find((s) => !isHidden(s))?.name;
  if (first === undefined && hidden.length > 0)
    throw new UserError(
      `${label}: every sheet is hidden (${nameList(hidden, 10)}); name the one to read with --sheet`,
    );
  return { first, hidden, count };
}

/**
 * Reads an .xlsx workbook's first visible sheet (or `sheet`) with exceljs's streaming reader, as the
 * same items as readOrderRowBatches, in batches (none empty; sheetItemBatches): the rows are not
 * all held in memory. The shared strings are,
 * compactly (SharedStrings), up to SHARED_STRINGS_LIMITS: a workbook past them is refused in
 * one line. exceljs writes each sheet to a temporary file when it comes before the shared
 * strings in the zip (as Excel saves them), and reads it back once the strings are known. A
 * workbook that unpacks past `maxUnzippedBytes` is refused before that, or stopped there.
 */
export async function* readXlsxRows(
  path: string,
  options: ReadXlsxRowsOptions = {},
): AsyncGenerator<CsvItem[]> {
  const label = options.label ?? path;
  const opening = { label, maxUnzippedBytes: options.maxUnzippedBytes, failed: workbookError };
  const { found, seen } = yield* readZipSheet(path, opening, (source) =>
    workbookItems(path, source, options),
  );
  if (found) return;
  if (seen.length === 0)
    throw new UserError(`${label}: not an .xlsx workbook (no worksheet in it)`);
  const names = nameList(seen, 10);
  throw new UserError(
    options.sheet === undefined
      ? `${label}: its first sheet is not a worksheet (worksheets: ${names}); name one with --sheet`
      : `${label}: no sheet named ${JSON.stringify(options.sheet)} (sheets: ${names})`,
  );
}

/**
 * The items of the sheet read, in batches, from the guarded stream. Answers whether one was read, and the
 * sheets seen (readXlsxRows says why none was).
 */
async function* workbookItems(
  path: string,
  source: Readable,
  options: ReadXlsxRowsOptions,
): AsyncGenerator<CsvItem[], { found: boolean; seen: string[] }> {
  const label = options.label ?? path;
  const WorkbookReader = workbookReaderClass();
  const reader = new WorkbookReader(source, READER_OPTIONS);
  readSharedStrings(reader);
  nameSheets(reader);
  const strings = new SharedStrings();
  const seen: string[] = [];
  let found = false;
  const events = (reader.parse() as unknown as AsyncIterable<ReaderEvent>)[Symbol.asyncIterator]();
  const sheets = new SheetFiles(events);
  try {
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      if (event.eventType === undefined) {
        if (!strings.add(sharedText(event.text))) throw tooManyStrings(label, strings);
        continue;
      }
      if (event.eventType !== "worksheet") continue;
      const sheet = event.value;
      sheets.came(sheet);
      seen.push(sheet.name);
      const model = reader as unknown as ReaderModel;
      const choice = sheetChoice(model, label, options.sheet);
      const first = choice.first ?? sheet.name;
      const wanted =
        options.sheet === undefined ? sheet.name === first : sheet.name === options.sheet;
      if (found || !wanted) continue;
      found = true;
      const parsed = decodeSheet(sheet);
      const onRow = options.onPosition
        ? await sheetPosition(path, {
            reader: model,
            sheet,
            parsed,
            onPosition: options.onPosition,
          })
        : undefined;
      const { hidden, count } = choice;
      const context = { name: sheet.name, label, options, hidden, count, onRow };
      const rows = sheetRows(sheet as unknown as SheetSource, strings);
      yield* sheetItemBatches(rows, context);
    }
    sheets.ended();
  } finally {
    await sheets.discard();
  }
  return { found, seen };
}
