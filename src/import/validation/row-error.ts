/**
 * One problem with the order file, in the words the user needs to fix it:
 * the physical file line (1-based; the line a multi-line record starts on), the column
 * (the field name after `--map`, or "" when the problem is the whole row) and what is wrong.
 */
export interface RowError {
  line: number;
  column: string;
  message: string;
}

/** "line 7, column face_value: ..." — one line, fit for a terminal or an error file. */
export function formatRowError(error: RowError): string {
  const where = error.column ? `line ${error.line}, column ${error.column}` : `line ${error.line}`;
  return `${where}: ${error.message}`;
}
