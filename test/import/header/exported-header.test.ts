import { describe, expect, it } from "vitest";
import { parseColumnMap } from "../../../src/import/header/column-map.js";
import { resolveHeader } from "../../../src/import/header/header.js";
import { FileNotes, headerReportLines } from "../../../src/import/header/header-report.js";
import {
  HEADER_SEARCH_ROWS,
  HeaderRowError,
  HeaderSearch,
  type HeldRow,
} from "../../../src/import/header/header-row.js";
import { mapCandidate, mapOption } from "../../../src/import/header/map-suggestion.js";
import { nameList } from "../../../src/import/header/name-list.js";
import { totalsLabel } from "../../../src/import/header/totals-row.js";

function rows(...lines: string[][]): HeldRow<number>[] {
  return lines.map((names, i) => ({ line: i + 1, names, row: i + 1 }));
}

/** The header HeaderSearch picks from rows offered one by one, then the end. */
function search(
  lines: string[][],
  options: { headerRow?: number; map?: Record<string, string> } = {},
) {
  const finder = new HeaderSearch<number>(options);
  for (const row of rows(...lines)) {
    const found = finder.offer(row);
    if (found) return found;
  }
  return finder.end();
}

describe("HeaderSearch", () => {
  it("takes a first row that names known columns at once, as the header always was", () => {
    const found = search([
      ["email", "product_code", "face_value"],
      ["a@b.co", "X", "1"],
    ]);
    expect(found).toMatchObject({ header: { line: 1 }, skipped: [], after: [], by: "search" });
  });

  it("skips title rows above a header of synonyms or --map sources", () => {
    const titled = search([
      ["Q4 gift cards"],
      ["exported by finance", ""],
      ["Email Address", "SKU", "Amount"],
    ]);
    expect(titled).toMatchObject({ header: { line: 3 }, skipped: [1, 2] });
    const mapped = search([["Title"], ["Work Email", "Item", "Gift"]], {
      map: { "Work Email": "email", Item: "product_code" },
    });
    expect(mapped).toMatchObject({ header: { line: 2 }, skipped: [1] });
  });

  it("without a row of two known columns, picks one known among several cells, else the first", () => {
    const hr = search([["Title"], ["Work Email", "Name", "Amount"], ["a@b.co", "Ann", "5"]]);
    expect(hr).toMatchObject({ header: { line: 2 }, skipped: [1], after: [{ line: 3 }] });
    const none = search([
      ["Mail", "Item"],
      ["a@b.co", "X"],
    ]);
    expect(none).toMatchObject({ header: { line: 1 }, skipped: [], after: [{ line: 2 }] });
  });

  it("searches the first rows only: past them, the first row is the header", () => {
    const lines = Array.from({ length: HEADER_SEARCH_ROWS + 5 }, (_, i) => [`note ${i}`]);
    lines.push(["email", "product_code", "face_value"]);
    const found = search(lines);
    expect(found?.header.line).toBe(1);
    expect(found?.after).toHaveLength(HEADER_SEARCH_ROWS - 1);
  });

  it("--header-row N: row N, whatever it holds; a row not there is an error naming it", () => {
    expect(
      search(
        [
          ["email", "product_code", "face_value"],
          ["x", "y"],
        ],
        { headerRow: 2 },
      ),
    ).toMatchObject({
      header: { line: 2 },
      skipped: [1],
      by: "option",
    });
    expect(() => search([["a"], ["b"]], { headerRow: 5 })).toThrow(
      "--header-row 5: the file has no row 5 (its last row is 2)",
    );
    const gap = new HeaderSearch<number>({ headerRow: 2 });
    gap.offer({ line: 1, names: ["t"], row: 1 });
    expect(() => gap.offer({ line: 3, names: ["email"], row: 3 })).toThrow(HeaderRowError);
  });
});

describe("totals rows", () => {
  const fields = (f: Record<string, string>) => f;
  it("recognises Total, Totals, Sum, Grand total, Subtotal with no recipient and no product", () => {
    for (const label of ["Total", "TOTALS", "Sum", "Grand total:", "Subtotal", "Sub-total (EUR)"]) {
      const cells = [label, "", "150.00"];
      expect(
        totalsLabel(cells, fields({ email: label, product_code: "", face_value: "150.00" })),
      ).toBe(label);
    }
    // A count in the e-mail column, a formula's cell (unread) in the product column.
    expect(
      totalsLabel(
        ["Total", "12", ""],
        fields({ reference: "Total", email: "12", product_code: "" }),
        new Set(["product_code"]),
      ),
    ).toBe("Total");
  });

  it("never takes an order for one: an e-mail, a product code, or another first word", () => {
    const cells = ["Total", "a@example.com", "AMZ-US", "5"];
    expect(
      totalsLabel(
        cells,
        fields({ reference: "Total", email: "a@example.com", product_code: "AMZ-US" }),
      ),
    ).toBeUndefined();
    expect(
      totalsLabel(
        ["Total", "", "AMZ-US"],
        fields({ reference: "Total", email: "", product_code: "AMZ-US" }),
      ),
    ).toBeUndefined();
    expect(
      totalsLabel(["Totally new", "", ""], fields({ reference: "Totally new", email: "" })),
    ).toBeUndefined();
    expect(
      totalsLabel(["Summer", "", ""], fields({ reference: "Summer", email: "" })),
    ).toBeUndefined();
  });
});

describe("a missing column's --map", () => {
  it("picks the header most like the field, and writes the option parseColumnMap reads", () => {
    expect(mapCandidate(["Name", "Work Email", "Amount"], "email")).toBe("Work Email");
    expect(mapCandidate(["Name", "Dept"], "email")).toBeUndefined();
    expect(mapCandidate(["Gift Amount (EUR)", "Name"], "face_value")).toBe("Gift Amount (EUR)");
    expect(mapCandidate(["Emal"], "email")).toBe("Emal");
    const option = mapOption("Work Email", "email");
    expect(option).toBe("--map 'Work Email=email'");
    expect(parseColumnMap([option.slice("--map '".length, -1)])).toEqual({ "Work Email": "email" });
    expect(mapOption("Bob's mail", "email")).toBe("--map 'Bob'\\''s mail=email'");
  });

  it("names the headers (bounded) and the fix, one candidate per field", () => {
    const headers = ["Work Email", "Item Code", ...Array.from({ length: 30 }, (_, i) => `x${i}`)];
    const resolved = resolveHeader(headers);
    expect(resolved.ok).toBe(false);
    if (resolved.ok) return;
    expect(resolved.errors.map((e) => e.message)).toEqual([
      `missing required column email; the file's headers: "Work Email", "Item Code", "x0", "x1", "x2" and 27 more; try --map 'Work Email=email'`,
      "missing required column product_code; try --map 'Item Code=product_code'",
      "missing required column face_value",
    ]);
  });
});

describe("names in messages are bounded", () => {
  it("lists the first five, then how many more; cuts a long name", () => {
    expect(nameList(["a", "b"])).toBe('"a", "b"');
    expect(nameList(Array.from({ length: 7 }, (_, i) => `n${i}`))).toBe(
      '"n0", "n1", "n2", "n3", "n4" and 2 more',
    );
    expect(nameList(["x".repeat(100_000)]).length).toBeLessThan(50);
  });

  it("the header report says which sheet, which rows were skipped, and bounds its lists", () => {
    const ignored = Array.from({ length: 1000 }, (_, i) => ({ index: i + 3, name: `c${i}` }));
    const lines = headerReportLines({
      line: 3,
      names: [],
      renamed: [],
      ignored,
      skipped: [1, 2],
      by: "search",
      sheet: { name: "Orders", hidden: ["Lookup"], count: 2 },
    });
    expect(lines[0]).toBe('sheet "Orders" read (hidden sheet "Lookup" skipped)');
    expect(lines[1]).toBe("header found on row 3; rows 1-2 skipped");
    expect(lines[2]).toMatch(/^ignored columns: "c0", "c1", "c2", "c3", "c4" and 995 more \(/);
  });
});

describe("--json's file", () => {
  const report = {
    line: 1,
    names: [],
    renamed: [],
    ignored: [],
    skipped: [],
    by: "search" as const,
  };

  it("is left out for a text file read as it always was", () => {
    const notes = new FileNotes();
    notes.onHeader(report);
    expect(notes.json()).toBeUndefined();
  });

  it("tells the sheet, the rows skipped and the totals rows, bounded, with their count", () => {
    const notes = new FileNotes();
    notes.onHeader({
      ...report,
      line: 3,
      skipped: [1, 2],
      sheet: { name: "O", hidden: [], count: 1 },
    });
    const said = Array.from({ length: 8 }, (_, i) =>
      notes.onTotalsRow({ line: 10 + i, label: "Total" }),
    );
    expect(said.filter((line) => line !== "")).toHaveLength(5);
    expect(said[0]).toBe('row 10: a totals row ("Total") left out: it is not an order\n');
    expect(notes.endText()).toBe("and 3 more totals rows left out\n");
    expect(notes.json()).toEqual({
      sheet: "O",
      hidden_sheets_skipped: [],
      header_line: 3,
      skipped_lines: [1, 2],
      totals_rows_left_out: [10, 11, 12, 13, 14].map((line) => ({ line, label: "Total" })),
      totals_rows_count: 8,
    });
  });
});
