import type { HeaderReport } from "../readers/csv-rows.js";

/** headerReportLines as text, each line ending in a newline; "" when there is nothing to say. */
export function headerReportText(report: HeaderReport): string {
  return headerReportLines(report)
    .map((line) => `${line}\n`)
    .join("");
}

/**
 * What `orders import` says about the header, one line each: the columns it renamed (only when
 * some header was not already a field name) and the columns it ignores.
 */
export function headerReportLines(report: HeaderReport): string[] {
  const lines: string[] = [];
  if (report.renamed.length > 0) {
    const pairs = report.renamed.map((c) => `${JSON.stringify(c.source)} -> ${c.field}`);
    lines.push(`columns: ${pairs.join(", ")}`);
  }
  if (report.ignored.length > 0) {
    const names = report.ignored.map((c) =>
      c.name ? JSON.stringify(c.name) : `column ${c.index + 1} (no name)`,
    );
    lines.push(
      `ignored columns: ${names.join(", ")} (not sent; name a field with --map 'Header=field', send as metadata.<key>, or refuse with --strict-columns)`,
    );
  }
  return lines;
}
