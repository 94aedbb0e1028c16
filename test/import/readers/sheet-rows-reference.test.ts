// The worksheet rows read with the hand-written tokenizer (src/import/readers/sheet-xml.ts) are
// the rows the same SheetRowParser made of saxes's events (the parser exceljs uses, and this
// reader used before): every sheet of every .xlsx in the fixtures (the corpus of other
// producers included), and workbooks exceljs writes here, cut into chunks of several sizes.
// The shared strings are those exceljs's own reader reads of the same tables.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import ExcelJS from "exceljs";
import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { SharedStrings } from "../../../src/import/readers/shared-strings.js";
import type { SheetRow } from "../../../src/import/readers/xlsx-cells.js";
import {
  SheetRowParser,
  type SheetSource,
  sheetRows,
} from "../../../src/import/readers/xlsx-sheet-rows.js";
import {
  sharedStringsOf,
  sharedText,
  workbookReaderClass,
} from "../../../src/import/readers/xlsx-workbook.js";
import { tmpDir } from "../../helpers/tmp-dir.js";
import { xlsxFile } from "../../helpers/xlsx.js";
import { zipEntryTexts } from "../../helpers/zip-read.js";

const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

/** Odd styles show dates, even ones not: both readings of a number cell are compared. */
const WORKBOOK: SheetSource["workbook"] = {
  styles: { getStyleModel: (id: number) => ({ numFmt: id % 2 ? "yyyy-mm-dd" : "General" }) },
  properties: { model: { date1904: false } },
};

function strings(): SharedStrings {
  const table = new SharedStrings();
  for (let i = 0; i < 5_000; i++) table.add(`shared ${i} <&>`);
  return table;
}

function chunks(xml: string, size: number): string[] {
  const cut: string[] = [];
  for (let i = 0; i < xml.length; i += size) cut.push(xml.slice(i, i + size));
  return cut;
}

/** The rows as saxes's events made them: the reference. */
function saxesRows(xml: string, size: number): SheetRow[] {
  const rows = new SheetRowParser(
    { iterator: chunks("", 1) as never, workbook: WORKBOOK },
    strings(),
  );
  const sax = new SaxesParser();
  let error: Error | undefined;
  sax.on("error", (e) => {
    error ??= e;
  });
  sax.on("opentag", (tag) => {
    const attributes = tag.attributes as Record<string, string>;
    rows.open(tag.name, { get: (name) => attributes[name] });
  });
  sax.on("text", (text) => rows.text(text));
  sax.on("cdata", (text) => rows.text(text));
  sax.on("closetag", (tag) => rows.close(tag.name));
  for (const chunk of chunks(xml, size)) {
    sax.write(chunk);
    if (error) throw error;
  }
  return rows.rows;
}

async function tokenizerRows(xml: string, size: number): Promise<SheetRow[]> {
  const source = { iterator: chunks(xml, size), workbook: WORKBOOK } as unknown as SheetSource;
  const rows: SheetRow[] = [];
  for await (const batch of sheetRows(source, strings())) rows.push(...batch);
  return rows;
}

const SHEETS = /^xl\/worksheets\/sheet\d+\.xml$/;

/** Every entry matching `pattern` of the .xlsx files under `dir`, by file and entry. */
async function partsUnder(dir: string, pattern = SHEETS): Promise<[string, string][]> {
  const parts: [string, string][] = [];
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".xlsx"));
  for (const file of files.sort()) {
    const entries = await zipEntryTexts(join(dir, file), pattern);
    for (const [entry, xml] of entries) parts.push([`${file} ${entry}`, xml]);
  }
  return parts;
}

/** An entry's stream, its UTF-8 bytes cut every `size` bytes (a character cut in two). */
function entryOf(xml: string, size: number): PassThrough {
  const entry = new PassThrough();
  const bytes = Buffer.from(xml);
  for (let i = 0; i < bytes.length; i += size) entry.write(bytes.subarray(i, i + size));
  entry.end();
  return entry;
}

/** The strings exceljs's own reader reads of a shared strings table, as plain text. */
async function exceljsStrings(xml: string): Promise<string[]> {
  const parse = workbookReaderClass().prototype as unknown as {
    _parseSharedStrings(this: unknown, entry: PassThrough): AsyncIterable<{ text: unknown }>;
  };
  const reader = { options: { sharedStrings: "emit" }, _emitEntry() {} };
  const strings: string[] = [];
  for await (const s of parse._parseSharedStrings.call(reader, entryOf(xml, 65_536)))
    strings.push(sharedText(s.text));
  return strings;
}

async function tokenizerStrings(xml: string, size: number): Promise<string[]> {
  const strings: string[] = [];
  for await (const s of sharedStringsOf(entryOf(xml, size))) {
    expect(s.index).toBe(strings.length);
    strings.push(s.text);
  }
  return strings;
}

async function expectSameRows(xml: string): Promise<SheetRow[]> {
  const reference = saxesRows(xml, 65_536);
  for (const size of [5, 64, 65_536])
    expect(await tokenizerRows(xml, size), `chunks of ${size}`).toEqual(reference);
  expect(saxesRows(xml, 7)).toEqual(reference);
  return reference;
}

/** A row of each kind of cell exceljs writes. */
const KINDS: ExcelJS.CellValue[][] = [
  ["a <b> & 'c' \"d\"", "line\nbreak", "crlf\r\nend", "  padded  ", "Zoë 東京 😀", ""],
  [25.1, -0.5, 1e21, 2 ** 53 + 2, 0, null, 7],
  [true, false, new Date(Date.UTC(2024, 1, 29)), new Date(Date.UTC(2024, 1, 29, 12, 30))],
  [{ formula: "A3*2", result: 4 }, { formula: 'B1&"x"', result: "<x>" }, { formula: "1/0" }],
  [{ richText: [{ text: "rich " }, { font: { bold: true }, text: "& bold" }] }],
  [{ error: "#N/A" }, { text: "link", hyperlink: "https://example.com/?a=1&b=2" }],
];

describe("worksheet rows, tokenizer against saxes", () => {
  it("every sheet of every .xlsx in the fixtures (other producers' included)", async () => {
    const sheets = await partsUnder(FIXTURES);
    expect(sheets.length).toBeGreaterThanOrEqual(16);
    let rows = 0;
    for (const [name, xml] of sheets) {
      const read = await expectSameRows(xml).catch((error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      });
      rows += read.length;
    }
    expect(rows).toBeGreaterThan(5_000);
  }, 120_000);

  it("workbooks exceljs writes: every kind of cell, shared and inline strings", async () => {
    const dir = await tmpDir("sheet-rows-reference");
    const file = await xlsxFile(join(dir, "kinds.xlsx"), { Kinds: KINDS });
    const writer = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: join(dir, "inline.xlsx"),
      useSharedStrings: false,
    });
    const sheet = writer.addWorksheet("Inline");
    for (const row of KINDS) sheet.addRow(row).commit();
    sheet.commit();
    await writer.commit();
    const sheets = await partsUnder(dir);
    expect(sheets.map(([name]) => name)).toEqual([
      "inline.xlsx xl/worksheets/sheet1.xml",
      "kinds.xlsx xl/worksheets/sheet1.xml",
    ]);
    for (const [, xml] of sheets) expect(await expectSameRows(xml)).toHaveLength(KINDS.length);
    expect(file).toContain("kinds.xlsx");
  });

  it("every shared strings table in the fixtures, and one with rich text, is read as exceljs read it", async () => {
    const tables = await partsUnder(FIXTURES, /^xl\/sharedStrings\.xml$/);
    expect(tables.length).toBeGreaterThanOrEqual(5);
    const dir = await tmpDir("shared-strings-reference");
    await xlsxFile(join(dir, "kinds.xlsx"), { Kinds: KINDS });
    tables.push(...(await partsUnder(dir, /^xl\/sharedStrings\.xml$/)));
    tables.push([
      "rich and spaced",
      '<?xml version="1.0"?>\n<sst count="4">\n<si><t>a &amp; b</t></si>\n' +
        '<si><r><rPr><b/></rPr><t>Zo</t></r><r><t xml:space="preserve">ë </t></r></si><si/>' +
        "<si>\n  <t>padded</t>\n</si></sst>",
    ]);
    for (const [name, xml] of tables) {
      const expected = await exceljsStrings(xml);
      for (const size of [3, 64, 65_536])
        expect(await tokenizerStrings(xml, size), `${name}, bytes cut every ${size}`).toEqual(
          expected,
        );
    }
  });

  it("shared strings where exceljs read otherwise: CDATA read, phonetic runs skipped", async () => {
    // exceljs took no CDATA (saxes tells it apart from text) and read a phonetic run's reading
    // in place of the text it reads.
    const xml =
      "<sst><si><t><![CDATA[<x> & y]]></t></si>" +
      '<si><t>漢字</t><rPh sb="0" eb="2"><t>カンジ</t></rPh><phoneticPr fontId="1"/></si>' +
      '<si><r><t>東</t></r><r><t>京</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si></sst>';
    expect(await exceljsStrings(xml)).toEqual(["", "カンジ", "東京"]);
    for (const size of [1, 2, 5, 1000])
      expect(await tokenizerStrings(xml, size)).toEqual(["<x> & y", "漢字", "東京"]);
  });
});
