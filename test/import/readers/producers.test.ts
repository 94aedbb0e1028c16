import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CsvItem, HeaderReport } from "../../../src/import/readers/csv-rows.js";
import type { ReadOrderFileOptions } from "../../../src/import/readers/order-file.js";
import { readOrderFile } from "../../helpers/read-items.js";

/**
 * Workbooks as other producers save them (test/fixtures/readers/make.py writes them with
 * openpyxl and LibreOffice): each has a hidden "Lookup" sheet first, a merged title, the header
 * on row 2, e-mail with trailing spaces, amounts formatted as currency and a totals row by formula.
 */
const fixture = (name: string) =>
  fileURLToPath(new URL(`../../fixtures/readers/${name}`, import.meta.url));

async function read(name: string, options: ReadOrderFileOptions = {}) {
  const items: CsvItem[] = [];
  const totals: number[] = [];
  let header: HeaderReport | undefined;
  for await (const item of readOrderFile(fixture(name), {
    ...options,
    label: name,
    onHeader: (h) => {
      header = h;
    },
    onTotalsRow: (t) => totals.push(t.line),
  }))
    items.push(item);
  return { items, header, totals };
}

const ORDERS = [
  [3, { email: "ann@example.com", product_code: "OPEN-USD", face_value: "25", reference: "r-1" }],
  [4, { email: "bob@example.com", product_code: "OPEN-USD", face_value: "12.5", reference: "r-2" }],
  [5, { email: "bob@example.com", product_code: "OPEN-USD", face_value: "12.5", reference: "r-2" }],
];

describe("workbooks from other producers", () => {
  it.each([
    // Relationship targets absolute from the package's root, as openpyxl (and so pandas) writes them.
    ["openpyxl-orders.xlsx", "hidden"],
    // The same, written ./worksheets/...: relative, as the format also allows.
    ["dot-targets.xlsx", "hidden"],
    ["openpyxl-very-hidden.xlsx", "veryHidden"],
    // LibreOffice's own format, converted from the first.
    ["libreoffice-orders.ods", "hidden"],
  ])(
    "%s: the workbook's own sheet names and %s state; title, totals and rows as saved",
    async (name) => {
      const { items, header, totals } = await read(name);
      expect(header).toMatchObject({
        line: 2,
        skipped: [1],
        sheet: { name: "Orders", hidden: ["Lookup"], count: 2 },
      });
      expect(items.map((i) => [i.line, i.kind === "row" ? i.fields : i.error])).toEqual(ORDERS);
      expect(totals).toEqual([6]);
    },
  );

  it.each(["openpyxl-orders.xlsx", "libreoffice-orders.ods"])(
    "%s: --sheet reads a sheet by the name the workbook gives it, hidden or not",
    async (name) => {
      const orders = await read(name, { sheet: "Orders" });
      expect(orders.items).toHaveLength(3);
      await expect(read(name, { sheet: "Lookup" })).rejects.toThrow(
        `${name} (sheet "Lookup"): line 1, column email: missing required column email`,
      );
      await expect(read(name, { sheet: "Sheet1" })).rejects.toThrow(
        `${name}: no sheet named "Sheet1" (sheets: "Lookup", "Orders")`,
      );
    },
  );

  it("pandas to_excel (through openpyxl): its sheet by name, a float 25.0 read as 25", async () => {
    const { items, header } = await read("pandas-orders.xlsx", { sheet: "Orders" });
    expect(header).toMatchObject({ line: 1, sheet: { name: "Orders", hidden: [] } });
    expect(items.map((i) => i.cells)).toEqual([["ann@example.com", "OPEN-USD", "25"]]);
  });

  it("an .ods formula in a column that is read is refused naming its cell and formula", async () => {
    const { items } = await read("libreoffice-formula.ods");
    expect(items.map((i) => (i.kind === "row" ? i.problems : undefined))).toEqual([
      [
        {
          line: 2,
          column: "face_value",
          message:
            "cell C2 holds a formula (=20+5); formulas are not read: paste the value instead (Paste Special > Values)",
        },
      ],
    ]);
  });
});
