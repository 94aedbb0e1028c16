import type { RowError } from "../validation/row-error.js";
import { knownColumns } from "./header.js";

/**
 * How many non-blank rows at the top are searched for the header.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const HEADER_SEARCH_ROWS = 20;

/** A row that names at least this many known columns is a header (every valid one does). */
const HEADER_KNOWN = 2;

/** A non-blank row as the readers hold it while the header is searched for. */
export interface HeldRow<R> {
  line: number;
  /** Its cells as header names (an error file's unescaped). */
  names: string[];
  row: R;
}

/** The header, the non-blank rows above it (left out), and the rows read after it. */
export interface FoundHeader<R> {
  header: HeldRow<R>;
  /** Lines of the non-blank rows above the header: titles, left out. */
  skipped: number[];
  /** Rows read after the header while searching: data, in order. */
  after: HeldRow<R>[];
  by: "search" | "option";
}

/** `--header-row N` names a row that is not there (blank, inside a quoted cell, past the end). */
export class HeaderRowError extends Error {
  constructor(readonly error: RowError) {
    super(error.message);
  }
}

/**
 * Finds the header among the first rows, for files as exported, with title rows above their
 * header (docs/order-files.md, "Spreadsheets as exported"). Given `--header-row N`, row N is the
 * header. Otherwise it is the first of the first HEADER_SEARCH_ROWS non-blank rows that names
 * two or more known columns (a field, a synonym, metadata.<key>, a --map source): a file whose
 * first row is its header is read as it always was. When none does, the header is the first row
 * naming one known column among several cells, else the first non-blank row: the file is then
 * refused with that row's headers, as before.
 */
export class HeaderSearch<R> {
  private readonly held: HeldRow<R>[] = [];

  constructor(
    private readonly options: { headerRow?: number; map?: Readonly<Record<string, string>> },
  ) {}

  /** A non-blank row; returns the header once it is known, undefined while still looking. */
  offer(row: HeldRow<R>): FoundHeader<R> | undefined {
    const wanted = this.options.headerRow;
    if (wanted !== undefined) {
      if (row.line < wanted) {
        this.held.push(row);
        return undefined;
      }
      if (row.line > wanted) throw notThere(wanted, `row ${wanted} is blank or inside a cell`);
      return this.found(row, "option");
    }
    if (knownColumns(row.names, this.options.map) >= HEADER_KNOWN) return this.found(row, "search");
    this.held.push(row);
    return this.held.length >= HEADER_SEARCH_ROWS ? this.fallback() : undefined;
  }

  /** The input ended: the header among the rows held, or undefined when there were none. */
  end(): FoundHeader<R> | undefined {
    if (this.options.headerRow !== undefined) {
      const last = this.held.at(-1)?.line;
      const has = last === undefined ? "no rows" : `its last row is ${last}`;
      throw notThere(
        this.options.headerRow,
        `the file has no row ${this.options.headerRow} (${has})`,
      );
    }
    return this.held.length > 0 ? this.fallback() : undefined;
  }

  private found(header: HeldRow<R>, by: FoundHeader<R>["by"]): FoundHeader<R> {
    return { header, skipped: this.held.map((r) => r.line), after: [], by };
  }

  private fallback(): FoundHeader<R> {
    const map = this.options.map;
    let at = this.held.findIndex(
      (r) => knownColumns(r.names, map) >= 1 && r.names.filter((n) => n.trim()).length >= 2,
    );
    if (at === -1) at = 0;
    return {
      header: this.held[at]!,
      skipped: this.held.slice(0, at).map((r) => r.line),
      after: this.held.slice(at + 1),
      by: "search",
    };
  }
}

function notThere(row: number, why: string): HeaderRowError {
  return new HeaderRowError({ line: row, column: "", message: `--header-row ${row}: ${why}` });
}
