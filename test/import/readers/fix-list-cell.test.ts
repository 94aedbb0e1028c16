import { describe, expect, it } from "vitest";
import {
  fixListCell,
  isFixListHeader,
  readFixListCell,
} from "../../../src/import/readers/fix-list-cell.js";

/** Cells a spreadsheet would run, values that merely look like them, and apostrophes. */
const CELLS = [
  '=HYPERLINK("http://evil.example/","click")',
  "+44 7700 900123",
  "-5",
  "-dash@example.com",
  "@handle",
  "\t=1+1",
  "\r=1+1",
  "'",
  "''",
  "'quoted",
  "'-5",
  "''=x",
  "x'",
  "O'Brien",
  "plain",
  "",
  " =not a formula",
];

describe("the error file's cells (fix-list-cell.ts)", () => {
  it("no cell written starts as a formula; each reads back exactly", () => {
    for (const cell of CELLS) {
      const written = fixListCell(cell);
      expect(written).not.toMatch(/^[=+\-@\t\r]/);
      expect(readFixListCell(written)).toBe(cell);
    }
    expect(fixListCell("-5")).toBe("'-5");
    expect(fixListCell("'quoted")).toBe("''quoted");
    expect(fixListCell("plain")).toBe("plain");
  });

  it("reading leaves a cell alone unless its apostrophe escapes what the writer escapes", () => {
    expect(readFixListCell("'abc")).toBe("'abc");
    expect(readFixListCell("'")).toBe("'");
    expect(readFixListCell("'+1")).toBe("+1");
  });

  it("a header with error or line is a fix list's", () => {
    expect(isFixListHeader(["email", "product_code", "face_value", "error", "line"])).toBe(true);
    expect(isFixListHeader(["email", " Line "])).toBe(true);
    expect(isFixListHeader(["email", "product_code", "face_value"])).toBe(false);
  });
});
