import type ExcelJS from "exceljs";
import type { SharedStrings } from "./shared-strings.js";

/** A cell as text, and why its value cannot be taken when it cannot (a formula, a date...). */
interface CellText {
  text: string;
  /** Set when the value must not be read as the cell's text (a formula, a date...). */
  problem?: string;
}

/**
 * A number as its shortest round-trip text: the cell holds a double, and "25.1" is the one
 * decimal that reads back as it. No arithmetic: the money rules take it from there, as text.
 * An integer beyond 2^53 may not be the one typed, so it is refused rather than changed.
 */
export function numberProblem(value: number): string | undefined {
  if (!Number.isFinite(value)) return "is not a finite number";
  if (Number.isInteger(value) && !Number.isSafeInteger(value))
    return `holds the number ${value}, too large to be read exactly: store it as text`;
  return undefined;
}

function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
}

/**
 * The cells that are neither text nor a number, as the text a CSV export would show: rare, so
 * they may cost an object each (the common cells cost none: see xlsx-sheet-rows.ts).
 */
export function otherCellText(value: ExcelJS.CellValue, strings: SharedStrings): CellText {
  if (value === null || value === undefined) return { text: "" };
  if (typeof value === "string") return { text: value };
  if (typeof value === "number") return { text: String(value), problem: numberProblem(value) };
  if (typeof value === "boolean") return { text: value ? "TRUE" : "FALSE" };
  if (value instanceof Date) {
    const text = dateText(value);
    return {
      text,
      problem: `holds a date (${text}); dates are not read as order values: format the cell as text and type the value`,
    };
  }
  if ("sharedString" in value) {
    const index = (value as { sharedString: number }).sharedString;
    const text = strings.get(index);
    return text === undefined
      ? { text: "", problem: `names shared string ${index}, which the workbook does not hold` }
      : { text };
  }
  if ("formula" in value || "sharedFormula" in value) {
    const formula = "formula" in value ? value.formula : value.sharedFormula;
    const result = "result" in value ? value.result : undefined;
    const shown =
      result === undefined || result === null
        ? ""
        : otherCellText(result as ExcelJS.CellValue, strings).text;
    return {
      text: shown,
      problem: `holds a formula (=${formula ?? ""}); formulas are not read: paste the value instead (Paste Special > Values)`,
    };
  }
  if ("richText" in value) return { text: value.richText.map((part) => part.text).join("") };
  if ("error" in value) {
    return { text: String(value.error), problem: `holds the error ${String(value.error)}` };
  }
  if ("text" in value) {
    const text = (value as { text: unknown }).text;
    return typeof text === "string" ? { text } : otherCellText(text as ExcelJS.CellValue, strings);
  }
  return { text: "", problem: "holds a value that cannot be read as text" };
}

/** "A".."Z", "AA"...: the column letters of a 1-based column number. */
export function columnLetters(column: number): string {
  let letters = "";
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

/** A row's cells as text; `problems[i]`, when set, is why cell i cannot be taken as a value. */
export interface SheetRow {
  number: number;
  cells: string[];
  problems?: (string | undefined)[];
  /** Characters in all its cells. */
  chars: number;
}

export function trimTrailingEmpty(cells: string[]): string[] {
  let end = cells.length;
  while (end > 0 && cells[end - 1]!.trim() === "") end--;
  return cells.slice(0, end);
}
