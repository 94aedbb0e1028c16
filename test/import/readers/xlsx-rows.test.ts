import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { readXlsxRows } from "../../../src/import/readers/xlsx-rows.js";
import { tmpDir } from "../../helpers/tmp-dir.js";
import { eventually } from "../../helpers/wait-for.js";
import { xlsxFile } from "../../helpers/xlsx.js";
import { writeXlsxSheet } from "../../helpers/zip-bomb.js";

const ROWS = 20_000;

/** The items of readXlsxRows's batches, one at a time. */
async function* items<T>(batches: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

/** Text that is mostly characters of 2 and 3 UTF-8 bytes, different on each row. */
const description = (i: number) => `東京 ${i} Zoë Ünal ß ① ${"東京ü".repeat(8)}`;

async function workbook(path: string, useSharedStrings: boolean): Promise<string> {
  const writer = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings });
  const sheet = writer.addWorksheet("Orders");
  sheet.addRow(["email", "product_code", "face_value", "description"]).commit();
  for (let i = 0; i < ROWS; i++)
    sheet.addRow([`u${i}@example.com`, "AMZ-US", 25, description(i)]).commit();
  sheet.commit();
  await writer.commit();
  return path;
}

describe("readXlsxRows", () => {
  it.each([
    ["shared strings", true],
    ["inline strings", false],
  ])(
    "reads every character of a large sheet's %s, across the reader's chunks",
    async (_, shared) => {
      const dir = await tmpDir("xlsx-text");
      const file = await workbook(join(dir, "text.xlsx"), shared);
      const wrong: string[] = [];
      let i = 0;
      for await (const item of items(readXlsxRows(file))) {
        if (item.kind !== "row" || item.fields.description !== description(i))
          wrong.push(`line ${item.line}: ${JSON.stringify(item.cells)}`);
        i++;
      }
      expect(i).toBe(ROWS);
      // exceljs alone decodes each chunk on its own: a character cut in two reads as two U+FFFD.
      expect(wrong.slice(0, 3)).toEqual([]);
    },
  );
});

/** exceljs's temporary files of this process (its `tmp` names them tmp-PID-...). */
async function sheetFiles(): Promise<string[]> {
  const names = await readdir(tmpdir());
  return names.filter((name) => name.startsWith(`tmp-${process.pid}-`));
}

describe("readXlsxRows leaves no temporary file behind", () => {
  it("whether the sheet is read to its end, refused half way, or left by its reader", async () => {
    const dir = await tmpDir("xlsx-temp");
    const rows = [["email", "product_code", "face_value"], ...Array(50).fill(["a@b.co", "X", 1])];
    const good = await xlsxFile(join(dir, "good.xlsx"), { Orders: rows, Other: [["x"]] });
    const bad = await xlsxFile(join(dir, "bad.xlsx"), {
      Orders: [
        ["email", "email"],
        ["a@b.co", "b@b.co"],
      ],
      Other: [["x"]],
    });
    const before = await sheetFiles();

    let read = 0;
    for await (const batch of readXlsxRows(good)) read += batch.length;
    expect(read).toBe(50);
    await expect(async () => {
      for await (const batch of readXlsxRows(bad)) read += batch.length;
    }).rejects.toThrow(/bad.xlsx \(sheet "Orders"\): line 1/);
    for await (const _ of readXlsxRows(good, { sheet: "Orders" })) break;

    // exceljs removes them with an unlink it does not wait for.
    const left = async () => (await sheetFiles()).filter((name) => !before.includes(name));
    await eventually(async () => (await left()).length === 0, "the temporary files removed", 2000);
    expect(await left()).toEqual([]);
  });
});

describe("readXlsxRows of a damaged sheet", () => {
  it("refuses it in one line naming the file and where its XML is damaged", async () => {
    const dir = await tmpDir("xlsx-damaged");
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><worksheet><sheetData><row r="1">' +
      '<c r="A1" t="inlineStr"><is><t>email</t></is></c><c r="B1" t="inlineStr"><is><t>face_value</t></is></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t>a@b.co</is></c></row></sheetData></worksheet>';
    const file = await writeXlsxSheet(join(dir, "damaged.xlsx"), xml);
    await expect(async () => {
      for await (const _ of readXlsxRows(file)) {
      }
    }).rejects.toThrow(
      `damaged.xlsx: not a readable .xlsx workbook (the sheet's XML is damaged at character ${xml.indexOf("</is></c></row></sheetData>") + 1}: </is> where </t> was expected)`,
    );
  });
});
