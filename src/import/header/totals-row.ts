/** A totals row left out of the orders: where, and the label that marks it. */
export interface TotalsRow {
  line: number;
  label: string;
}

/** "Total", "Totals", "Grand total", "Subtotal", "Sum", "TOTAL:", "Total (EUR)"... */
const TOTALS_LABEL = /^(grand\s*|sub\s*-?\s*)?(total|totals|sum)\b/i;

/** The cells that make a row an order, not a sum: a recipient, a product. */
const ORDER_FIELDS = [
  "email",
  "recipient_reference",
  "product_code",
  "product_codes",
  "selection_template_id",
] as const;

const NUMBER = /^[\s\d.,+-]*$/;

/**
 * The label when a data row clearly is a spreadsheet's totals row, else undefined: its first
 * non-empty cell reads Total/Totals/Sum/Grand total..., and it names no recipient and no product
 * (those cells are empty, a number, or a formula: a count). A row with an e-mail address or a
 * product code is an order, whatever its first cell says, and is read and checked as one
 * (docs/order-files.md, "Spreadsheets as exported").
 *
 * @param unread the fields whose cell could not be read as a value (a formula), blanked in `fields`
 */
export function totalsLabel(
  cells: readonly string[],
  fields: Readonly<Record<string, string>>,
  unread: ReadonlySet<string> = new Set(),
): string | undefined {
  const first = cells.find((cell) => cell.trim() !== "")?.trim();
  if (first === undefined || !TOTALS_LABEL.test(first)) return undefined;
  for (const field of ORDER_FIELDS) {
    const value = fields[field];
    if (value === undefined || unread.has(field) || value.trim() === first) continue;
    if (value.includes("@") || !NUMBER.test(value)) return undefined;
  }
  return first;
}
