import type { SharedStrings } from "./shared-strings.js";
import { SheetXml, type XmlAttributes, type XmlHandler } from "./sheet-xml.js";
import { numberProblem, otherCellText, type SheetRow } from "./xlsx-cells.js";

/** What of exceljs's streaming worksheet reader the rows are read from (not in its typings). */
export interface SheetSource {
  /** The sheet's XML, as text (decodeSheet). */
  iterator: AsyncIterable<Buffer | string>;
  workbook: {
    styles: { getStyleModel(id: number): { numFmt?: string } | null | undefined };
    properties?: { model?: { date1904?: boolean } };
  };
}

/** The column number of a cell reference ("AB12" -> 28), read as exceljs reads it. */
function columnOf(ref: string | undefined): number {
  let column = 0;
  if (ref !== undefined)
    for (let i = 0; i < ref.length; i++) {
      const code = ref.charCodeAt(i);
      if (code >= 48 && code <= 57) break;
      if (code >= 65 && code <= 90) column = column * 26 + code - 64;
    }
  if (column < 1 || column > 16_384) throw new Error(`a cell's reference is not one: ${ref}`);
  return column;
}

/** exceljs's xmlDecode of a str or inlineStr cell's text (after the XML's own decoding). */
function xmlDecode(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&([a-z]*);/g, (c) => {
    switch (c) {
      case "&lt;":
        return "<";
      case "&gt;":
        return ">";
      case "&amp;":
        return "&";
      case "&apos;":
        return "'";
      case "&quot;":
        return '"';
      default:
        return c;
    }
  });
}

/** exceljs's isDateFmt: a number format with date or time letters outside quotes and []. */
function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  const bare = format.replace(/\[[^\]]*]/g, "").replace(/"[^"]*"/g, "");
  return /[ymdhMsb]+/.test(bare);
}

/** exceljs's excelToDate: a serial day number as a Date. */
function excelDate(serial: number, date1904: boolean): Date {
  return new Date(Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * 24 * 3600 * 1000));
}

const NO_TEXT = 0;
const FORMULA = 1;
const VALUE = 2;

/**
 * The rows of a worksheet's XML as SheetRows, straight from its XML's events: what exceljs's
 * WorksheetReader then readRow made of them, cell for cell (the same types, shared strings,
 * formulas, dates by number format, errors), without a Row and a Cell object (and its style)
 * for each cell, nor a cached address for each reference: those were about a third of an
 * .xlsx import's reading time and most of its garbage beside a CSV's
 * (docs/architecture/import.md, "Spreadsheets").
 * @internal exported for its tests (docs/development.md, "Exports for tests"): fed saxes's
 * events there, as the reference the tokenizer's rows are checked against.
 */
export class SheetRowParser implements XmlHandler {
  readonly rows: SheetRow[] = [];
  private inRows = false;
  private row: SheetRow | undefined;
  private rowFormat: string | undefined;
  private inCell = false;
  private cellRef: string | undefined;
  private cellStyle = 0;
  private cellType: string | undefined;
  private formula: string | undefined;
  private value: string | undefined;
  private target = NO_TEXT;
  private readonly dateFormats = new Map<string, boolean>();

  constructor(
    private readonly source: SheetSource,
    private readonly strings: SharedStrings,
  ) {}

  open(name: string, attributes: XmlAttributes): void {
    switch (name) {
      case "sheetData":
        this.inRows = true;
        break;
      case "row":
        if (this.inRows) this.openRow(attributes);
        break;
      case "c":
        if (this.row === undefined) break;
        this.inCell = true;
        this.cellRef = attributes.get("r");
        this.cellStyle = Number.parseInt(attributes.get("s") as string, 10);
        this.cellType = attributes.get("t");
        this.formula = undefined;
        this.value = undefined;
        // The text between cells is no cell's (exceljs gave it to the last cell's value, read).
        this.target = NO_TEXT;
        break;
      case "f":
        if (this.inCell) {
          this.formula = "";
          this.target = FORMULA;
        }
        break;
      case "v":
      case "is":
      case "t":
        if (this.inCell) {
          this.value = "";
          this.target = VALUE;
        }
        break;
    }
  }

  text(text: string): void {
    if (this.target === FORMULA) this.formula += text;
    else if (this.target === VALUE) this.value += text;
  }

  close(name: string): void {
    switch (name) {
      case "sheetData":
        this.inRows = false;
        break;
      case "row":
        if (this.row !== undefined) this.closeRow(this.row);
        this.row = undefined;
        break;
      case "c":
        if (this.row !== undefined && this.inCell) this.closeCell(this.row);
        this.inCell = false;
        break;
    }
  }

  private openRow(attributes: XmlAttributes): void {
    const style = attributes.get("s");
    this.row = { number: Number.parseInt(attributes.get("r") as string, 10), cells: [], chars: 0 };
    this.rowFormat = style
      ? (this.source.workbook.styles.getStyleModel(Number.parseInt(style, 10)) ?? undefined)?.numFmt
      : undefined;
  }

  private closeRow(row: SheetRow): void {
    const { cells } = row;
    let chars = 0;
    for (let i = 0; i < cells.length; i++) {
      cells[i] ??= "";
      chars += cells[i]!.length;
    }
    row.chars = chars;
    this.rows.push(row);
  }

  /** The cell's text and problem, as readRow made them of exceljs's cell value. */
  private closeCell(row: SheetRow): void {
    const column = columnOf(this.cellRef);
    // exceljs refused a cell in a row with no number (its address invalid): so does this.
    if (!(row.number > 0)) throw new Error(`a cell's row has no number: ${this.cellRef}`);
    const { formula, value } = this;
    if (formula === undefined && value === undefined) return;
    let text: string;
    let problem: string | undefined;
    if (formula !== undefined) {
      const result =
        value === undefined
          ? undefined
          : this.cellType === "str"
            ? xmlDecode(value)
            : Number.parseFloat(value);
      ({ text, problem } = otherCellText({ formula, result } as never, this.strings));
    } else {
      const v = value as string;
      switch (this.cellType) {
        case "s": {
          const index = Number.parseInt(v, 10);
          const shared = this.strings.get(index);
          if (shared !== undefined) text = shared;
          else ({ text, problem } = otherCellText({ sharedString: index } as never, this.strings));
          break;
        }
        case "inlineStr":
        case "str":
          text = xmlDecode(v);
          break;
        case "e":
          ({ text, problem } = otherCellText({ error: v } as never, this.strings));
          break;
        case "b":
          text = Number.parseInt(v, 10) !== 0 ? "TRUE" : "FALSE";
          break;
        default: {
          const number = Number.parseFloat(v);
          if (this.isDate()) {
            const date = excelDate(number, this.date1904());
            ({ text, problem } = otherCellText(date, this.strings));
          } else {
            text = String(number);
            problem = numberProblem(number);
          }
        }
      }
    }
    row.cells[column - 1] = text;
    if (problem === undefined) return;
    row.problems ??= [];
    row.problems[column - 1] = problem;
  }

  /** A number cell shows a date when its style's number format does (else its row's). */
  private isDate(): boolean {
    const style = this.cellStyle
      ? this.source.workbook.styles.getStyleModel(this.cellStyle)
      : undefined;
    const format = style ? style.numFmt : this.rowFormat;
    if (!format) return false;
    let known = this.dateFormats.get(format);
    if (known === undefined) {
      known = isDateFormat(format);
      this.dateFormats.set(format, known);
    }
    return known;
  }

  private date1904(): boolean {
    return this.source.workbook.properties?.model?.date1904 === true;
  }
}

/**
 * The worksheet's rows, as read from its XML (SheetXml, then SheetRowParser), a batch for each
 * chunk that ends a row (none empty). As exceljs, a damaged document stops the reading, and the
 * document is not required to close: rows end at their `</row>`.
 */
export async function* sheetRows(
  source: SheetSource,
  strings: SharedStrings,
): AsyncGenerator<SheetRow[]> {
  const rows = new SheetRowParser(source, strings);
  const xml = new SheetXml(rows);
  for await (const chunk of source.iterator) {
    xml.write(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    if (rows.rows.length > 0) yield rows.rows.splice(0);
  }
}
