import { grouped } from "../../grouped.js";
import type { HeaderReport } from "../readers/csv-rows.js";
import { NAMES_LISTED, nameList, shownName } from "./name-list.js";
import type { TotalsRow } from "./totals-row.js";

/** headerReportLines as text, each line ending in a newline; "" when there is nothing to say. */
function headerReportText(report: HeaderReport): string {
  return textOf(headerReportLines(report));
}

function textOf(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join("");
}

/** "row" in a workbook, "line" in a text file: the word errors use for where. */
function rowWord(report: HeaderReport): string {
  return report.sheet ? "row" : "line";
}

/**
 * What `orders import` says about the header, one line each: the sheet read (and the hidden
 * sheets skipped), where the header was found when rows above it were left out, the columns it
 * renamed (only when some header was not already a field name) and the columns it ignores.
 * Names are bounded: the first few, then "and N more".
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function headerReportLines(report: HeaderReport): string[] {
  const lines: string[] = [];
  // A workbook of one sheet has no choice to tell of.
  if (report.sheet && (report.sheet.count > 1 || report.sheet.hidden.length > 0)) {
    const { name, hidden } = report.sheet;
    const skipped =
      hidden.length === 0
        ? ""
        : ` (hidden sheet${hidden.length > 1 ? "s" : ""} ${nameList(hidden)} skipped)`;
    lines.push(`sheet ${shownName(name)} read${skipped}`);
  }
  if (report.skipped.length > 0) {
    const word = rowWord(report);
    const first = report.skipped[0]!;
    const last = report.skipped.at(-1)!;
    const range = first === last ? `${word} ${first}` : `${word}s ${first}-${last}`;
    const how = report.by === "option" ? "header on" : "header found on";
    lines.push(`${how} ${word} ${report.line}; ${range} skipped`);
  }
  if (report.renamed.length > 0) {
    const pairs = nameList(
      report.renamed.map((c) => `${shownName(c.source)} -> ${c.field}`),
      NAMES_LISTED,
      (pair) => pair,
    );
    lines.push(`columns: ${pairs}`);
  }
  if (report.ignored.length > 0) {
    const names = nameList(
      report.ignored.map((c) => (c.name ? shownName(c.name) : `column ${c.index + 1} (no name)`)),
      NAMES_LISTED,
      (name) => name,
    );
    lines.push(
      `ignored columns: ${names} (not sent; name a field with --map 'Header=field', send as metadata.<key>, or refuse with --strict-columns)`,
    );
  }
  return lines;
}

/** How many totals rows get a line each; the rest are counted at the end. */
const TOTALS_LISTED = 5;

/**
 * What the import says about the file as it reads it (the header, totals rows left out), for
 * the terminal as it goes and for `--json` at the end (docs/order-files.md, "Spreadsheets as
 * exported").
 */
export class FileNotes {
  private header: HeaderReport | undefined;
  private readonly totals: TotalsRow[] = [];
  private totalsCount = 0;

  /** The header was read: the lines to print now. */
  onHeader(report: HeaderReport): string {
    this.header = report;
    return headerReportText(report);
  }

  /** A totals row was left out: its line to print now, for the first few. */
  onTotalsRow(row: TotalsRow): string {
    this.totalsCount += 1;
    if (this.totalsCount > TOTALS_LISTED) return "";
    this.totals.push(row);
    const word = this.header?.sheet ? "row" : "line";
    return `${word} ${row.line}: a totals row (${shownName(row.label)}) left out: it is not an order\n`;
  }

  /** Said once the file is read: the totals rows not told one by one. */
  endText(): string {
    const more = this.totalsCount - this.totals.length;
    return more > 0 ? `and ${grouped(more)} more totals rows left out\n` : "";
  }

  /**
   * `file` of `orders import --json`: undefined before the header is read, and for a text file
   * read as it always was (its header first, no totals row), like the document's other optional
   * keys.
   */
  json() {
    const h = this.header;
    if (h === undefined) return undefined;
    if (!h.sheet && h.skipped.length === 0 && this.totalsCount === 0) return undefined;
    return {
      ...(h.sheet
        ? { sheet: h.sheet.name, hidden_sheets_skipped: h.sheet.hidden.slice(0, 20) }
        : {}),
      header_line: h.line,
      skipped_lines: h.skipped,
      totals_rows_left_out: this.totals,
      ...(this.totalsCount > this.totals.length ? { totals_rows_count: this.totalsCount } : {}),
    };
  }
}
