// The worksheet rows read with the hand-written tokenizer (src/import/readers/sheet-xml.ts) are
// the rows the same SheetRowParser made of saxes's events (the parser exceljs uses, and this
// reader used before): every sheet of every .xlsx in the fixtures (the corpus of other
// producers included), and workbooks exceljs writes here, cut into chunks of several sizes.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
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
  for await (const row of sheetRows(source, strings())) rows.push(row);
  return rows;
}

/** Every worksheet of the .xlsx files under `dir`, by file and entry. */
async function sheetsUnder(dir: string): Promise<[string, string][]> {
  const sheets: [string, string][] = [];
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".xlsx"));
  for (const file of files.sort()) {
    const entries = await zipEntryTexts(join(dir, file), /^xl\/worksheets\/sheet\d+\.xml$/);
    for (const [entry, xml] of entries) sheets.push([`${file} ${entry}`, xml]);
  }
  return sheets;
}

async function expectSameRows(xml: string): Promise<SheetRow[]> {
  const reference = saxesRows(xml, 65_536);
  for (const size of [5, 64, 65_536])
    expect(await tokenizerRows(xml, size), `chunks of ${size}`).toEqual(reference);
  expect(saxesRows(xml, 7)).toEqual(reference);
  return reference;
}

describe("worksheet rows, tokenizer against saxes", () => {
  it("every sheet of every .xlsx in the fixtures (other producers' included)", async () => {
    const sheets = await sheetsUnder(FIXTURES);
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
    const values: ExcelJS.CellValue[][] = [
      ["a <b> & 'c' \"d\"", "line\nbreak", "crlf\r\nend", "  padded  ", "Zoë 東京 😀", ""],
      [25.1, -0.5, 1e21, 2 ** 53 + 2, 0, null, 7],
      [true, false, new Date(Date.UTC(2024, 1, 29)), new Date(Date.UTC(2024, 1, 29, 12, 30))],
      [{ formula: "A3*2", result: 4 }, { formula: 'B1&"x"', result: "<x>" }, { formula: "1/0" }],
      [{ richText: [{ text: "rich " }, { font: { bold: true }, text: "& bold" }] }],
      [{ error: "#N/A" }, { text: "link", hyperlink: "https://example.com/?a=1&b=2" }],
    ];
    const file = await xlsxFile(join(dir, "kinds.xlsx"), { Kinds: values });
    const writer = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: join(dir, "inline.xlsx"),
      useSharedStrings: false,
    });
    const sheet = writer.addWorksheet("Inline");
    for (const row of values) sheet.addRow(row).commit();
    sheet.commit();
    await writer.commit();
    const sheets = await sheetsUnder(dir);
    expect(sheets.map(([name]) => name)).toEqual([
      "inline.xlsx xl/worksheets/sheet1.xml",
      "kinds.xlsx xl/worksheets/sheet1.xml",
    ]);
    for (const [, xml] of sheets) expect(await expectSameRows(xml)).toHaveLength(values.length);
    expect(file).toContain("kinds.xlsx");
  });
});
