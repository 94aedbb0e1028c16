import { SaxesParser, type SaxesTagNS } from "saxes";
import { grouped } from "../../grouped.js";
import { MAX_RECORD_CHARS } from "./csv-records.js";
import { attr, cellStart, is, NS, type OdsCellStart, odsCellText, repeatOf } from "./ods-cells.js";
import { OrderFileError } from "./order-file-error.js";
import type { SheetRow } from "./xlsx-cells.js";

/** The most columns and rows a sheet has (LibreOffice's and Excel's): past them, a crafted file. */
const MAX_COLUMNS = 16_384;
const MAX_ROWS = 1_048_576;

/** Thrown out of the parser at the end of the table read, to stop it there (see write). */
const TABLE_ENDED = Symbol("the table read has ended");

/** A table (sheet) of an .ods file, hidden when its table style says `table:display="false"`. */
export interface OdsTable {
  name: string;
  hidden: boolean;
}

/** A row of the table read; a row repeated (`number-rows-repeated`) comes once, with its count. */
export interface OdsRowRun {
  row: SheetRow;
  repeat: number;
}

interface RowUnderWay {
  cells: string[];
  problems?: (string | undefined)[];
  chars: number;
  column: number;
  repeat: number;
}

/**
 * The rows of one table of an .ods file's content.xml, parsed with saxes as its text comes
 * (`write`): a chunk gives the rows it completes, and nothing is kept of the rows already given
 * or of the other tables. Repeats are counts, never expanded here: an empty cell repeated across
 * 16,000 columns or an empty row repeated a million times costs nothing (docs/architecture/import.md,
 * "Spreadsheets", ".ods"). The table read is the first `choose` accepts; once it ends, `done`.
 */
export class OdsContent {
  readonly tables: OdsTable[] = [];
  chosen: OdsTable | undefined;
  done = false;
  private readonly parser = new SaxesParser({ xmlns: true });
  private readonly hiddenStyles = new Set<string>();
  private rows: OdsRowRun[] = [];
  private tableStyle: string | undefined;
  private depth = 0;
  private reading = false;
  private rowNumber = 0;
  private row: RowUnderWay | undefined;
  private cell: OdsCellStart | undefined;
  private paragraphs: string[] = [];
  private paragraph: string | undefined;
  private cellChars = 0;
  private annotations = 0;

  constructor(
    private readonly label: string,
    private readonly choose: (table: OdsTable) => boolean,
  ) {
    this.parser.on("opentag", (node) => this.open(node as SaxesTagNS));
    this.parser.on("closetag", (node) => this.close(node as SaxesTagNS));
    this.parser.on("text", (text) => this.text(text));
  }

  /** Parses the next piece of the XML, up to the end of the table read; the rows it completed. */
  write(text: string): OdsRowRun[] {
    try {
      this.parser.write(text);
    } catch (error) {
      if (error !== TABLE_ENDED) throw error;
    }
    return this.take();
  }

  /** The end of the XML: it must be whole. */
  end(): OdsRowRun[] {
    if (!this.done) this.parser.close();
    return this.take();
  }

  private take(): OdsRowRun[] {
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  private open(node: SaxesTagNS): void {
    if (is(node, NS.style, "style")) this.openStyle(node);
    else if (is(node, NS.style, "table-properties")) this.openTableProperties(node);
    else if (is(node, NS.table, "table")) this.openTable(node);
    else if (this.reading && this.depth === 1) this.openInTable(node);
  }

  private openInTable(node: SaxesTagNS): void {
    if (is(node, NS.table, "table-row")) this.openRow(node);
    else if (this.row === undefined) return;
    else if (is(node, NS.table, "table-cell") || is(node, NS.table, "covered-table-cell")) {
      this.cell = cellStart(node);
      this.paragraphs = [];
      this.cellChars = 0;
    } else if (this.cell === undefined) return;
    else if (is(node, NS.office, "annotation")) this.annotations += 1;
    else if (this.annotations === 0) this.openText(node);
  }

  /** Paragraphs, and the elements that stand for white space in them (text:s, tab, line-break). */
  private openText(node: SaxesTagNS): void {
    if (node.uri !== NS.text) return;
    if (node.local === "p" || node.local === "h") this.paragraph = "";
    else if (node.local === "s") {
      const count = Number(attr(node, NS.text, "c") ?? 1);
      this.add(" ".repeat(Math.min(Number.isSafeInteger(count) ? count : 1, MAX_RECORD_CHARS)));
    } else if (node.local === "tab") this.add("\t");
    else if (node.local === "line-break") this.add("\n");
  }

  private openStyle(node: SaxesTagNS): void {
    const family = attr(node, NS.style, "family");
    this.tableStyle = family === "table" ? attr(node, NS.style, "name") : undefined;
  }

  private openTableProperties(node: SaxesTagNS): void {
    if (this.tableStyle !== undefined && attr(node, NS.table, "display") === "false")
      this.hiddenStyles.add(this.tableStyle);
  }

  private openTable(node: SaxesTagNS): void {
    this.depth += 1;
    if (this.depth !== 1 || this.done) return;
    const style = attr(node, NS.table, "style-name");
    const table = {
      name: attr(node, NS.table, "name") ?? `Sheet${this.tables.length + 1}`,
      hidden: style !== undefined && this.hiddenStyles.has(style),
    };
    this.tables.push(table);
    if (this.chosen !== undefined || !this.choose(table)) return;
    this.chosen = table;
    this.reading = true;
  }

  private openRow(node: SaxesTagNS): void {
    const repeat = repeatOf(node, "number-rows-repeated");
    this.row = { cells: [], chars: 0, column: 0, repeat };
  }

  private text(text: string): void {
    if (this.paragraph === undefined || this.annotations > 0) return;
    // White space in a paragraph is collapsed (OpenDocument 1.2, 6.1.2): text:s writes the rest.
    this.add(text.replace(/[ \t\r\n]+/g, " "));
  }

  private add(text: string): void {
    if (this.paragraph === undefined) return;
    this.paragraph += text;
    this.cellChars += text.length;
    if (this.cellChars + (this.row?.chars ?? 0) > MAX_RECORD_CHARS) this.tooLong();
  }

  private close(node: SaxesTagNS): void {
    if (is(node, NS.style, "style")) this.tableStyle = undefined;
    else if (is(node, NS.table, "table")) this.closeTable();
    else if (!this.reading || this.depth !== 1) return;
    else if (is(node, NS.office, "annotation")) this.annotations -= 1;
    else if (node.uri === NS.text && (node.local === "p" || node.local === "h"))
      this.closeParagraph();
    else if (is(node, NS.table, "table-cell") || is(node, NS.table, "covered-table-cell"))
      this.closeCell();
    else if (is(node, NS.table, "table-row")) this.closeRow();
  }

  private closeTable(): void {
    this.depth -= 1;
    if (this.depth !== 0 || !this.reading) return;
    this.reading = false;
    this.done = true;
    // Nothing after the table read is parsed, not even the rest of this chunk.
    throw TABLE_ENDED;
  }

  private closeParagraph(): void {
    if (this.paragraph === undefined || this.annotations > 0) return;
    this.paragraphs.push(this.paragraph);
    this.paragraph = undefined;
  }

  private closeCell(): void {
    const row = this.row;
    const cell = this.cell;
    if (row === undefined || cell === undefined) return;
    this.cell = undefined;
    const { text, problem } = odsCellText(cell, this.paragraphs.join("\n"));
    if (text === "" && problem === undefined) {
      // Empty, however often repeated: nothing is stored, the next cell's column moves on.
      row.column += cell.repeat;
      return;
    }
    if (row.column + cell.repeat > MAX_COLUMNS) this.pastColumns(row.column + cell.repeat);
    for (let i = 0; i < cell.repeat; i++) this.put(row, text, problem);
    if (row.chars > MAX_RECORD_CHARS) this.tooLong();
  }

  private put(row: RowUnderWay, text: string, problem: string | undefined): void {
    while (row.cells.length < row.column) row.cells.push("");
    row.cells[row.column] = text;
    row.chars += text.length;
    if (problem !== undefined) {
      row.problems ??= [];
      row.problems[row.column] = problem;
    }
    row.column += 1;
  }

  private closeRow(): void {
    const row = this.row;
    if (row === undefined) return;
    this.row = undefined;
    const number = this.rowNumber + 1;
    this.rowNumber += row.repeat;
    if (row.cells.length === 0) return;
    if (this.rowNumber > MAX_ROWS) this.pastRows(number);
    const { cells, problems, chars } = row;
    this.rows.push({ row: { number, cells, problems, chars }, repeat: row.repeat });
  }

  private tooLong(): never {
    const line = this.rowNumber + 1;
    const message = `a row longer than ${grouped(MAX_RECORD_CHARS)} characters`;
    throw new OrderFileError(this.label, [{ line, column: "", message }]);
  }

  private pastColumns(columns: number): never {
    const line = this.rowNumber + 1;
    const message = `the row has cells in ${grouped(columns)} columns, past the ${grouped(MAX_COLUMNS)} a sheet has (a damaged file?)`;
    throw new OrderFileError(this.label, [{ line, column: "", message }]);
  }

  private pastRows(line: number): never {
    const message = `rows with values go past row ${grouped(MAX_ROWS)}, the last a sheet has (a damaged file?)`;
    throw new OrderFileError(this.label, [{ line, column: "", message }]);
  }
}
