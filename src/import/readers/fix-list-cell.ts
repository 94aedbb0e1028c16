import { isFixListColumn } from "../header/header.js";

/** What a spreadsheet may run as a formula (some apps strip a tab or CR first), and `'`. */
const ESCAPED = /^[=+\-@\t\r']/;

/**
 * A cell of the error file (invalid-rows-file.ts) as written. Someone opens it in a spreadsheet
 * to fix it, so a cell starting with = + - @ gets a leading apostrophe, as the report's do
 * (`=HYPERLINK(...)` is text, not a live formula). Unlike the report it is read back: a cell
 * that starts with an apostrophe gets one more, so that readFixListCell undoes exactly this
 * ("-5" -> "'-5", "'x" -> "''x", "x" as it is; docs/architecture/import.md, "The life of a CSV
 * row").
 */
export function fixListCell(cell: string): string {
  return ESCAPED.test(cell) ? `'${cell}` : cell;
}

/**
 * A cell of a fix list as it was before fixListCell: one leading apostrophe is taken off when
 * what follows it is one fixListCell escapes. Any other cell is read as it is.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function readFixListCell(cell: string): string {
  return cell.startsWith("'") && ESCAPED.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/**
 * Whether a header is an error file's: it has the columns the error file adds (`error`,
 * `line`), which the import recognises and ignores. Its cells are then read with
 * readFixListCell; any other file's are read as they are.
 */
export function isFixListHeader(names: readonly string[]): boolean {
  return names.some(isFixListColumn);
}

/** `cells` as readFixListCell reads them. */
export function readFixListCells(cells: readonly string[]): string[] {
  return cells.map(readFixListCell);
}
