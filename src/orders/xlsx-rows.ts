import ExcelJS from "exceljs";
import { UserError } from "../errors/user-error.js";
import { type CsvItem, isBlank, type ReadOrderRowsOptions, toRow } from "./csv-rows.js";
import { type IgnoredColumn, resolveHeader } from "./header.js";
import { OrderFileError } from "./order-file-error.js";
import type { RowError } from "./row-error.js";

export interface ReadXlsxRowsOptions extends Omit<ReadOrderRowsOptions, "delimiter"> {
  /** The sheet to read, by name. @defaultValue the workbook's first sheet */
  sheet?: string;
}

/** A cell as text, or why its value cannot be taken (a formula, a date, an error). */
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
function numberText(value: number): CellText {
  if (!Number.isFinite(value)) return { text: String(value), problem: "is not a finite number" };
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return {
      text: String(value),
      problem: `holds the number ${value}, too large to be read exactly: store it as text`,
    };
  }
  return { text: String(value) };
}

function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
}

/** What a cell of the streaming reader holds, as the text a CSV export would show. */
function cellText(value: ExcelJS.CellValue): CellText {
  if (value === null || value === undefined) return { text: "" };
  if (typeof value === "string") return { text: value };
  if (typeof value === "number") return numberText(value);
  if (typeof value === "boolean") return { text: value ? "TRUE" : "FALSE" };
  if (value instanceof Date) {
    const text = dateText(value);
    return {
      text,
      problem: `holds a date (${text}); dates are not read as order values: format the cell as text and type the value`,
    };
  }
  if ("formula" in value || "sharedFormula" in value) {
    const formula = "formula" in value ? value.formula : value.sharedFormula;
    const result = "result" in value ? value.result : undefined;
    const shown =
      result === undefined || result === null ? "" : cellText(result as ExcelJS.CellValue);
    return {
      text: typeof shown === "string" ? shown : shown.text,
      problem: `holds a formula (=${formula ?? ""}); formulas are not read: paste the value instead (Paste Special > Values)`,
    };
  }
  if ("richText" in value) return { text: value.richText.map((part) => part.text).join("") };
  if ("error" in value) {
    return { text: String(value.error), problem: `holds the error ${String(value.error)}` };
  }
  if ("text" in value) {
    const text = (value as { text: unknown }).text;
    return typeof text === "string" ? { text } : cellText(text as ExcelJS.CellValue);
  }
  return { text: "", problem: "holds a value that cannot be read as text" };
}

/** "A".."Z", "AA"...: the column letters of a 1-based column number. */
function columnLetters(column: number): string {
  let letters = "";
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

interface SheetRow {
  number: number;
  texts: CellText[];
}

function readRow(row: ExcelJS.Row): SheetRow {
  const texts: CellText[] = [];
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    texts[column - 1] = cellText(cell.value);
  });
  for (let i = 0; i < texts.length; i++) texts[i] ??= { text: "" };
  return { number: row.number, texts };
}

function trimTrailingEmpty(cells: string[]): string[] {
  let end = cells.length;
  while (end > 0 && cells[end - 1]!.trim() === "") end--;
  return cells.slice(0, end);
}

/**
 * The rows of one worksheet as the CSV reader gives them: the first non-blank row is the
 * header, lines are the sheet's row numbers, blank rows are skipped. A formula, a date or an
 * error value in a column that maps to a field makes the row invalid, naming the cell; in an
 * ignored column it is kept as text (it is never sent).
 */
async function* sheetItems(
  sheet: AsyncIterable<ExcelJS.Row>,
  sheetName: string,
  label: string,
  options: ReadXlsxRowsOptions,
): AsyncGenerator<CsvItem> {
  let header: string[] | undefined;
  let ignored: IgnoredColumn[] = [];
  for await (const raw of sheet) {
    const row = readRow(raw);
    const line = row.number;
    const cells = row.texts.map((t) => t.text);
    if (isBlank(cells)) continue;
    if (header === undefined) {
      const names = trimTrailingEmpty(cells);
      const resolved = resolveHeader(names, options.map, line, options);
      if (!resolved.ok) throw new OrderFileError(label, resolved.errors);
      header = resolved.fields;
      ignored = resolved.ignored;
      options.onHeader?.({ line, names, renamed: resolved.renamed, ignored });
      continue;
    }
    const beyond = cells.findIndex((cell, i) => i >= header!.length && cell.trim() !== "");
    if (beyond !== -1) {
      const cell = `${columnLetters(beyond + 1)}${line}`;
      const last = columnLetters(header.length);
      const message = `cell ${cell} is right of the header's last column ${last}: give its column a header or clear it`;
      yield { kind: "error", line, error: { line, column: "", message }, cells };
      continue;
    }
    const padded = header.map((_, i) => cells[i] ?? "");
    const problems: RowError[] = [];
    header.forEach((field, i) => {
      const problem = row.texts[i]?.problem;
      if (field === "" || problem === undefined) return;
      problems.push({
        line,
        column: field,
        message: `cell ${columnLetters(i + 1)}${line} ${problem}`,
      });
      padded[i] = "";
    });
    const item = toRow(line, header, ignored, padded);
    // The error file gets the cells as they were, formulas and dates included.
    item.cells = header.length >= cells.length ? header.map((_, i) => cells[i] ?? "") : cells;
    if (problems.length > 0) item.problems = problems;
    yield item;
  }
  if (header === undefined) {
    throw new OrderFileError(label, [
      {
        line: 1,
        column: "",
        message: `sheet ${JSON.stringify(sheetName)} is empty: no header row`,
      },
    ]);
  }
}

/** The reader's failure in one line: a zip that is not a workbook, a damaged file. */
function workbookError(label: string, error: unknown): Error {
  if (error instanceof UserError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const message = (error as Error).message ?? String(error);
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") {
    return new UserError(`cannot read ${label}: ${message}`);
  }
  const first = message.split("\n")[0];
  return new UserError(`${label}: not a readable .xlsx workbook (${first})`);
}

/**
 * Reads an .xlsx workbook's first sheet (or `sheet`) with exceljs's streaming reader, as the
 * same items as readOrderRows: the rows are not all held in memory (the shared strings are).
 */
export async function* readXlsxRows(
  path: string,
  options: ReadXlsxRowsOptions = {},
): AsyncGenerator<CsvItem> {
  const label = options.label ?? path;
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, {
    worksheets: "emit",
    sharedStrings: "cache",
    // Styles tell a date from a number.
    styles: "cache",
    hyperlinks: "ignore",
    entries: "ignore",
  });
  const seen: string[] = [];
  let found = false;
  try {
    for await (const sheet of reader) {
      const name = (sheet as unknown as { name: string }).name;
      seen.push(name);
      if (found) continue;
      const sheets = (reader as unknown as { model?: { sheets?: { name: string }[] } }).model
        ?.sheets;
      const first = sheets?.[0]?.name ?? name;
      const wanted = options.sheet === undefined ? name === first : name === options.sheet;
      if (!wanted) continue;
      found = true;
      yield* sheetItems(sheet as unknown as AsyncIterable<ExcelJS.Row>, name, label, options);
    }
  } catch (error) {
    throw workbookError(label, error);
  }
  if (found) return;
  if (seen.length === 0)
    throw new UserError(`${label}: not an .xlsx workbook (no worksheet in it)`);
  const names = seen.map((n) => JSON.stringify(n)).join(", ");
  throw new UserError(
    options.sheet === undefined
      ? `${label}: its first sheet is not a worksheet (worksheets: ${names}); name one with --sheet`
      : `${label}: no sheet named ${JSON.stringify(options.sheet)} (sheets: ${names})`,
  );
}
