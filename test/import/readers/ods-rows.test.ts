import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CsvItem, HeaderReport } from "../../../src/import/readers/csv-rows.js";
import { readOdsRows } from "../../../src/import/readers/ods-rows.js";
import type { ReadSheetOptions } from "../../../src/import/readers/sheet-items.js";
import {
  CONTENT_END,
  CONTENT_START,
  cell,
  num,
  odsFile,
  row,
  table,
  writeOds,
} from "../../helpers/ods.js";
import { tmpDir } from "../../helpers/tmp-dir.js";

/** docs/architecture/import.md, "Spreadsheets", ".ods": content.xml read as LibreOffice writes it. */
const HEADER = row(["email", "product_code", "face_value"]);
const EMPTY_TAIL = '<table:table-cell table:number-columns-repeated="16381"/>';

async function read(
  tables: string[],
  options: ReadSheetOptions = {},
): Promise<{ items: CsvItem[]; header?: HeaderReport; totals: number[] }> {
  const file = await odsFile(join(await tmpDir("ods"), "orders.ods"), tables);
  return readFile(file, options);
}

async function readFile(file: string, options: ReadSheetOptions = {}) {
  const items: CsvItem[] = [];
  const totals: number[] = [];
  let header: HeaderReport | undefined;
  for await (const item of readOdsRows(file, {
    ...options,
    onHeader: (h) => {
      header = h;
    },
    onTotalsRow: (t) => totals.push(t.line),
  }))
    items.push(item);
  return { items, header, totals };
}

function refusal(tables: string[], options: ReadSheetOptions = {}): Promise<string> {
  return read(tables, options).then(
    () => "read",
    (error: Error) => error.message,
  );
}

const cellsOf = (items: CsvItem[]) => items.map((i) => [i.line, ...i.cells]);

describe("readOdsRows", () => {
  it("gives a repeated row once per repeat and skips a million empty rows and 16,000 empty columns without expanding them", async () => {
    const { items } = await read([
      table("Orders", [
        row([cell("email"), cell("product_code"), cell("face_value"), EMPTY_TAIL]),
        row(["a@example.com", "AMZ-US", num("25"), EMPTY_TAIL], 'table:number-rows-repeated="3"'),
        row([EMPTY_TAIL + EMPTY_TAIL], 'table:number-rows-repeated="1048000"'),
        row([num("12.5", 'table:number-columns-repeated="1"'), EMPTY_TAIL]),
        row(["z@example.com", "AMZ-US", num("12.5")]),
      ]),
    ]);
    expect(cellsOf(items)).toEqual([
      [2, "a@example.com", "AMZ-US", "25"],
      [3, "a@example.com", "AMZ-US", "25"],
      [4, "a@example.com", "AMZ-US", "25"],
      [1048005, "12.5", "", ""],
      [1048006, "z@example.com", "AMZ-US", "12.5"],
    ]);
  });

  it("reads a merged title's covered cells as empty, finds the header below it and leaves a totals row out", async () => {
    const { items, header, totals } = await read([
      table("Orders", [
        row([
          cell("Gift cards", 'table:number-columns-spanned="3"'),
          '<table:covered-table-cell table:number-columns-repeated="2"/>',
        ]),
        HEADER,
        row(["a@example.com", "AMZ-US", num("25")]),
        row(["Total", "<table:table-cell/>", num("25", 'table:formula="of:=SUM([.C3])"')]),
      ]),
    ]);
    expect(header).toMatchObject({ line: 2, skipped: [1], sheet: { name: "Orders", hidden: [] } });
    expect(cellsOf(items)).toEqual([[3, "a@example.com", "AMZ-US", "25"]]);
    expect(totals).toEqual([4]);
  });

  it("reads text as shown: spaces (text:s), tabs, line breaks and paragraphs; a comment is not the cell's text", async () => {
    const rich =
      '<table:table-cell office:value-type="string"><office:annotation><text:p>a note</text:p></office:annotation>' +
      '<text:p>Hi <text:span>Ann</text:span><text:s text:c="2"/>!</text:p><text:p>line<text:tab/>two<text:line-break/>end</text:p></table:table-cell>';
    const { items } = await read([
      table("Orders", [
        row(["email", "product_code", "face_value", "message"]),
        row([
          cell("a@example.com", ""),
          '<table:table-cell office:value-type="string" office:string-value="AMZ-US"><text:p>shown</text:p></table:table-cell>',
          '<table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p></table:table-cell>',
          rich,
        ]),
      ]),
    ]);
    expect(items[0]!.cells).toEqual([
      "a@example.com",
      "AMZ-US",
      "TRUE",
      "Hi Ann  !\nline\ttwo\nend",
    ]);
  });

  it("refuses a formula, a date or an error in a column that is read, naming the cell; elsewhere keeps what it shows", async () => {
    const { items } = await read([
      table("Orders", [
        row(["email", "product_code", "face_value", "internal"]),
        row([
          "a@example.com",
          "AMZ-US",
          num("25", 'table:formula="of:=20+5"'),
          cell("shown", 'table:formula="of:=&quot;shown&quot;"'),
        ]),
        row([
          "b@example.com",
          "AMZ-US",
          '<table:table-cell office:value-type="date" office:date-value="2026-01-05"><text:p>01/05/26</text:p></table:table-cell>',
        ]),
        row([
          "c@example.com",
          "AMZ-US",
          '<table:table-cell office:value-type="string" calcext:value-type="error"><text:p>#DIV/0!</text:p></table:table-cell>',
        ]),
      ]),
    ]);
    const problems = items.map((i) => (i.kind === "row" ? i.problems?.map((p) => p.message) : []));
    expect(problems).toEqual([
      [
        "cell C2 holds a formula (=20+5); formulas are not read: paste the value instead (Paste Special > Values)",
      ],
      [
        "cell C3 holds a date (2026-01-05); dates are not read as order values: format the cell as text and type the value",
      ],
      ["cell C4 holds the error #DIV/0!"],
    ]);
    expect(items[0]!.cells).toEqual(["a@example.com", "AMZ-US", "25", "shown"]);
  });

  it("skips hidden tables (table:display=false) unless --sheet names one, and names the sheet read", async () => {
    const tables = [
      table("Lookup", [row(["code", "name"])], 'table:style-name="hidden"'),
      table("Orders", [HEADER, row(["a@example.com", "AMZ-US", num("25")])]),
      table("Other", [row(["x"])]),
    ];
    const read1 = await read(tables);
    expect(read1.header?.sheet).toEqual({ name: "Orders", hidden: ["Lookup"], count: 2 });
    expect(await refusal(tables, { sheet: "Lookup" })).toMatch(
      /orders\.ods \(sheet "Lookup"\): line 1, column email: missing required column email/,
    );
    expect(await refusal(tables, { sheet: "Nope" })).toMatch(
      /orders\.ods: no sheet named "Nope" \(sheets: "Lookup", "Orders", "Other"\)$/,
    );
    expect(await refusal([tables[0]!])).toMatch(
      /orders\.ods: every sheet is hidden \("Lookup"\); name the one to read with --sheet$/,
    );
  });

  it("stops at the end of the table read: what follows it is not parsed", async () => {
    const file = join(await tmpDir("ods"), "orders.ods");
    await writeOds(file, [
      { text: CONTENT_START + table("Orders", [HEADER, row(["a@example.com", "AMZ-US", "25"])]) },
      // Not XML at all: reading it would fail.
      { text: "<table:table <<<" },
    ]);
    const { items } = await readFile(file);
    expect(cellsOf(items)).toEqual([[2, "a@example.com", "AMZ-US", "25"]]);
  });

  it("refuses cells past column XFD, values past row 1,048,576 and a row past 1,000,000 characters, naming the row", async () => {
    expect(
      await refusal([
        table("Orders", [HEADER, row([cell("x", 'table:number-columns-repeated="20000"')])]),
      ]),
    ).toMatch(/line 2: the row has cells in 20,000 columns, past the 16,384 a sheet has/);
    expect(
      await refusal([
        table("Orders", [
          HEADER,
          row(["a@example.com", "AMZ-US", "25"], 'table:number-rows-repeated="2000000"'),
        ]),
      ]),
    ).toMatch(/line 2: rows with values go past row 1,048,576, the last a sheet has/);
    const long = '<table:table-cell><text:p><text:s text:c="900000"/></text:p></table:table-cell>';
    expect(await refusal([table("Orders", [HEADER, row([long, long])])])).toMatch(
      /line 2: a row longer than 1,000,000 characters/,
    );
  });

  it("reads a large table a row at a time, every row", async () => {
    const file = join(await tmpDir("ods"), "large.ods");
    await writeOds(file, [
      { text: `${CONTENT_START}<table:table table:name="Orders">${HEADER}` },
      { text: row(["a@example.com", "AMZ-US", num("25")]), times: 50_000 },
      { text: `</table:table>${CONTENT_END}` },
    ]);
    let rows = 0;
    let last = 0;
    for await (const item of readOdsRows(file)) {
      rows += 1;
      last = item.line;
    }
    expect([rows, last]).toEqual([50_000, 50_001]);
  });

  it("refuses a content.xml that unpacks past the ratio (a zip bomb), a damaged one and a zip with none", async () => {
    const dir = await tmpDir("ods");
    const bomb = await writeOds(join(dir, "bomb.ods"), [
      { text: `${CONTENT_START}<table:table table:name="Orders">${HEADER}` },
      { text: row(["", "", ""]).repeat(1000), times: 20_000 },
    ]);
    await expect(readFile(bomb)).rejects.toThrow(
      /bomb\.ods: refused before unpacking: its entries would unpack to \d+ MB, past the limit of 200 MB \("content\.xml" alone/,
    );
    // Stating 1 MB, it is counted as it unpacks and stopped there.
    const lying = await writeOds(
      join(dir, "lying.ods"),
      [
        { text: `${CONTENT_START}<table:table table:name="Orders">${HEADER}` },
        { text: row(["", "", ""]).repeat(1000), times: 20_000 },
      ],
      2 ** 20,
    );
    await expect(readFile(lying, { maxUnzippedBytes: 20 * 2 ** 20 })).rejects.toThrow(
      /lying\.ods: "content\.xml" unpacks past the limit of 20 MB for the whole workbook, more than the zip's directory states/,
    );
    const damaged = await writeOds(join(dir, "damaged.ods"), [
      { text: `${CONTENT_START}<table:table table:name="Orders"><table:table-row></table:tab` },
    ]);
    await expect(readFile(damaged)).rejects.toThrow(
      /damaged\.ods: not a readable \.ods spreadsheet \(/,
    );
    const none = await writeOds(join(dir, "none.ods"), []);
    const { writeZip } = await import("../../helpers/zip-bomb.js");
    await writeZip(none, [{ name: "mimetype", parts: [{ text: "x" }] }]);
    await expect(readFile(none)).rejects.toThrow(
      "none.ods: not a readable .ods spreadsheet (no content.xml in it)",
    );
  });
});
