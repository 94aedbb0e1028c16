import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { zipEntrySizes } from "../../../src/import/readers/zip-entry-sizes.js";
import { tmpDir } from "../../helpers/tmp-dir.js";
import { xlsxFile } from "../../helpers/xlsx.js";

describe("zipEntrySizes", () => {
  it("reads each entry's uncompressed size from a workbook's central directory", async () => {
    const dir = await tmpDir("zip-sizes");
    const rows = Array.from({ length: 2000 }, (_, i) => [`user-${i}@example.com`, i]);
    const file = await xlsxFile(join(dir, "book.xlsx"), { Orders: rows, Notes: [["note"]] });
    const sizes = await zipEntrySizes(file);
    expect([...sizes.keys()]).toEqual(
      expect.arrayContaining([
        "xl/workbook.xml",
        "xl/_rels/workbook.xml.rels",
        "xl/worksheets/sheet1.xml",
        "xl/worksheets/sheet2.xml",
        "xl/sharedStrings.xml",
      ]),
    );
    // 2,000 rows of XML unpack to more than the whole compressed file.
    const bytes = (await readFile(file)).length;
    expect(sizes.get("xl/worksheets/sheet1.xml")).toBeGreaterThan(bytes);
    expect(sizes.get("xl/worksheets/sheet2.xml")).toBeLessThan(2000);
  });

  it("gives no sizes, and no error, for what it cannot read", async () => {
    const dir = await tmpDir("zip-sizes");
    const text = join(dir, "orders.csv");
    await writeFile(text, "email,product_code,face_value\n");
    const empty = join(dir, "empty.xlsx");
    await writeFile(empty, "");
    const book = await xlsxFile(join(dir, "book.xlsx"), { Orders: [["a"]] });
    const cut = join(dir, "cut.xlsx");
    const whole = await readFile(book);
    await writeFile(cut, whole.subarray(0, whole.length - 30));
    for (const file of [text, empty, cut, join(dir, "missing.xlsx")])
      expect((await zipEntrySizes(file)).size).toBe(0);
  });
});
