// The worksheet's rows read from its XML (src/import/readers/xlsx-sheet-rows.ts) as exceljs's
// WorksheetReader and the cell reading before it made them: each cell type, dates by the
// cell's number format (else its row's), formulas, errors, entities, chunks cut anywhere.
import { describe, expect, it } from "vitest";
import { SharedStrings } from "../../../src/import/readers/shared-strings.js";
import type { SheetRow } from "../../../src/import/readers/xlsx-cells.js";
import { type SheetSource, sheetRows } from "../../../src/import/readers/xlsx-sheet-rows.js";

const STYLES: Record<number, { numFmt?: string }> = {
  1: { numFmt: "General" },
  2: { numFmt: "yyyy-mm-dd" },
  3: { numFmt: '0.00" days"' },
};

function source(xml: string, chunk: number, date1904 = false): SheetSource {
  return {
    iterator: (async function* () {
      for (let i = 0; i < xml.length; i += chunk) yield xml.slice(i, i + chunk);
    })(),
    workbook: {
      styles: { getStyleModel: (id: number) => STYLES[id] ?? null },
      properties: { model: { date1904 } },
    },
  };
}

async function rowsOf(xml: string, chunk = 7, date1904 = false): Promise<SheetRow[]> {
  const strings = new SharedStrings();
  strings.add("first");
  strings.add("Zoë & co");
  const rows: SheetRow[] = [];
  for await (const batch of sheetRows(source(xml, chunk, date1904), strings)) rows.push(...batch);
  return rows;
}

const sheet = (rows: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><worksheet><sheetData>${rows}</sheetData></worksheet>`;

describe("sheetRows", () => {
  it("reads text, shared strings, numbers and booleans as one string a cell, holes blank", async () => {
    const rows = await rowsOf(
      sheet(
        '<row r="1"><c r="A1" t="s"><v>1</v></c><c r="C1" t="str"><v>a &amp;lt; b</v></c>' +
          '<c r="D1" t="inlineStr"><is><t>inline</t></is></c><c r="E1" s="1"><v>25.10</v></c>' +
          '<c r="F1" t="b"><v>1</v></c><c r="G1" t="b"><v>0</v></c><c r="H1"/></row>',
      ),
    );
    expect(rows).toEqual([
      {
        number: 1,
        cells: ["Zoë & co", "", "a < b", "inline", "25.1", "TRUE", "FALSE"],
        chars: 8 + 5 + 6 + 4 + 4 + 5,
      },
    ]);
  });

  it("tells why a formula, a date, an error or a missing shared string cannot be taken", async () => {
    const rows = await rowsOf(
      sheet(
        '<row r="2"><c r="A2"><f>B2*2</f><v>4</v></c><c r="B2" s="2"><v>45000</v></c>' +
          '<c r="C2" t="e"><v>#DIV/0!</v></c><c r="D2" t="s"><v>9</v></c>' +
          '<c r="E2" s="3"><v>3</v></c><c r="F2"><v>9007199254740993</v></c></row>',
      ),
    );
    const [row] = rows;
    expect(row?.cells).toEqual(["4", "2023-03-15", "#DIV/0!", "", "3", "9007199254740992"]);
    expect(row?.problems?.[0]).toMatch(/formula \(=B2\*2\)/);
    expect(row?.problems?.[1]).toMatch(/holds a date \(2023-03-15\)/);
    expect(row?.problems?.[2]).toMatch(/holds the error #DIV\/0!/);
    expect(row?.problems?.[3]).toMatch(/names shared string 9/);
    expect(row?.problems?.[4]).toBeUndefined();
    expect(row?.problems?.[5]).toMatch(/too large to be read exactly/);
  });

  it("takes a row's number format for a cell without a style of its own; 1904 dates", async () => {
    const rows = await rowsOf(sheet('<row r="3" s="2"><c r="A3"><v>0</v></c></row>'), 5, true);
    expect(rows[0]?.cells).toEqual(["1904-01-01"]);
  });

  it("reads the same rows whatever the chunks, and refuses a cell past column XFD", async () => {
    const xml = sheet(
      Array.from(
        { length: 50 },
        (_, i) => `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>0</v></c></row>`,
      ).join(""),
    );
    expect(await rowsOf(xml, 3)).toEqual(await rowsOf(xml, 100_000));
    await expect(rowsOf(sheet('<row r="1"><c r="XFE1"><v>1</v></c></row>'))).rejects.toThrow(
      /reference/,
    );
    await expect(rowsOf(sheet('<row r="1"><c r="A1"><v>1</c></row>'))).rejects.toThrow();
  });

  it("reads the XML as the tokenizer tells it: quotes, order, comments, CDATA, entities cut", async () => {
    const xml = sheet(
      "<!-- rows --><row r='1'><c t='s' s='0' r='B1'><v>0</v></c><!-- <c r='C1'> -->" +
        '<c r="C1" t="str"><v><![CDATA[a<b]]></v></c><c r="D1" t="str"><v>x &#10;&#x41;&amp;amp;</v></c>' +
        '<?pi <c r="E1"> ?><c r="E1" t="inlineStr"><is><t xml:space="preserve"> pad </t></is></c></row>',
    );
    const expected = [{ number: 1, cells: ["", "first", "a<b", "x \nA&", " pad "], chars: 18 }];
    for (const chunk of [1, 2, 3, 5, 8, 13]) expect(await rowsOf(xml, chunk)).toEqual(expected);
  });

  it("reads what exceljs read of odd cells: empty values, runs of inline text, spaces between", async () => {
    const rows = await rowsOf(
      sheet(
        '<row r="1">\n  <c r="A1" t="str"><v/></c>\n  <c r="B1"><v/></c>\n  <c r="C1"/>\n' +
          '  <c r="D1" t="inlineStr"><is><r><t>one</t></r><r><t>two</t></r></is></c>\n  <c r="E1">\n  </c>\n</row>',
      ),
    );
    // An empty <v/> of a number is NaN, as exceljs read it; of an inline string's runs exceljs
    // kept the last. A cell with no value is blank, whatever the spaces before it.
    expect(rows[0]?.cells).toEqual(["", "NaN", "", "two"]);
    expect(rows[0]?.problems?.[1]).toMatch(/not a finite number/);
    expect(rows[0]?.problems?.filter((p) => p !== undefined)).toHaveLength(1);
  });

  it("reads no row of prefixed elements (x:row), as exceljs; refuses a cell without r", async () => {
    const prefixed =
      '<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>' +
      '<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c></x:row></x:sheetData></x:worksheet>';
    expect(await rowsOf(prefixed)).toEqual([]);
    await expect(rowsOf(sheet('<row r="1"><c t="s"><v>0</v></c></row>'))).rejects.toThrow(
      "a cell's reference is not one: undefined",
    );
  });

  it("says where the XML is damaged", async () => {
    await expect(rowsOf(sheet('<row r="1"><c r="A1"><v>1</c></row>'), 4)).rejects.toThrow(
      "the sheet's XML is damaged at character 86: </c> where </v> was expected",
    );
    await expect(
      rowsOf(sheet('<row r="1"><c r="A1" t="str"><v>&nbsp;</v></c></row>')),
    ).rejects.toThrow(/damaged at character \d+: an unknown entity &nbsp;/);
  });
});
