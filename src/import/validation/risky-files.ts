import { ROW_STATUSES, type RowStatus } from "../../ledger/row-status.js";
import type { CsvItem, HeaderReport } from "../readers/csv-rows.js";
import { OrderFileError } from "../readers/order-file-error.js";

/**
 * Files that read as order files but are not meant to be sent as they are (docs/order-files.md,
 * "Files that are refused"): the template's example row, a giftjobs report, a header with no
 * rows. Each is refused in one line (exit 2) unless its flag says it is meant.
 */

/**
 * The e-mail address of `orders template`'s example row (order-template.ts).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const EXAMPLE_EMAIL = "recipient@example.com";

/**
 * The columns only a giftjobs report has (src/campaigns/report.ts): a header with all of them is
 * a report's, whatever else it holds.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const REPORT_ONLY_COLUMNS = ["status", "order_id", "idempotency_key"] as const;

/**
 * The report statuses whose rows `--from-report` imports: nothing was made for them
 * (failed_final) or nothing was sent (cancelled), so sending them again cannot pay twice.
 */
const RESENT_STATUSES: readonly RowStatus[] = ["failed_final", "cancelled"];

export interface RiskyFileOptions {
  file: string;
  /** `--allow-example`: the template's example row is imported like any other. */
  allowExample?: boolean;
  /** `--from-report`: a giftjobs report's re-sendable rows are imported, its order columns only. */
  fromReport?: boolean;
}

/**
 * Whether a header's cells are a giftjobs report's (trimmed, any case).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function isReportHeader(names: readonly string[]): boolean {
  const lower = new Set(names.map((name) => name.trim().toLowerCase()));
  return REPORT_ONLY_COLUMNS.every((column) => lower.has(column));
}

/** Whether a row is the template's example row: its e-mail is the example's address. */
function isExampleRow(fields: Readonly<Record<string, string>>): boolean {
  return (fields.email ?? "").trim().toLowerCase() === EXAMPLE_EMAIL;
}

/**
 * Watches one order file as it is read: refuses it at its header when it is a report (without
 * --from-report), at the template's example row (without --allow-example), and at its end when
 * it had no data rows. With --from-report, says which rows to leave out and counts them.
 */
export class RiskyFileCheck {
  private header: HeaderReport | undefined;
  /** The `status` column of a report read with --from-report. */
  private statusColumn: number | undefined;
  /** Report rows left out, by their status. */
  readonly leftOut = new Map<string, number>();

  constructor(private readonly options: RiskyFileOptions) {}

  /** Told the header: a report's is refused without --from-report. */
  onHeader(header: HeaderReport): void {
    this.header = header;
    if (!isReportHeader(header.names)) {
      // Said rather than ignored: the flag was given for another file, or the report was edited.
      if (this.options.fromReport)
        throw this.refuse(
          header.line,
          "",
          `--from-report: this is not a giftjobs report (its header has no ${REPORT_ONLY_COLUMNS.join(", ")} columns); import it without --from-report`,
        );
      return;
    }
    if (!this.options.fromReport) throw this.refuse(header.line, "", reportRefusal());
    this.statusColumn = header.names.findIndex((n) => n.trim().toLowerCase() === "status");
  }

  /** Whether to import the item: false for a report row that is not re-sent (counted). */
  admit(item: CsvItem): boolean {
    if (this.statusColumn !== undefined) {
      const status = (item.cells[this.statusColumn] ?? "").trim();
      if (!(RESENT_STATUSES as readonly string[]).includes(status)) {
        // Any other cell is "other": the counts stay a few, whatever the file holds.
        const key = (ROW_STATUSES as readonly string[]).includes(status) ? status : "other";
        this.leftOut.set(key, (this.leftOut.get(key) ?? 0) + 1);
        return false;
      }
    }
    if (item.kind === "row" && !this.options.allowExample && isExampleRow(item.fields))
      throw this.refuse(
        item.line,
        "email",
        `this is the example row of \`giftjobs orders template\` (${EXAMPLE_EMAIL}): delete the row, or pass --allow-example to import it; nothing was enqueued`,
      );
    return true;
  }

  /** Told the file ended after `rows` data rows were imported: none is refused. */
  onEnd(rows: number): void {
    if (rows > 0) return;
    const line = this.header?.line ?? 1;
    if (this.leftOut.size > 0)
      throw this.refuse(
        line,
        "",
        `no row of this report is to be sent again (${leftOutText(this.leftOut)}): --from-report imports only ${RESENT_STATUSES.join(" and ")} rows`,
      );
    throw this.refuse(
      line,
      "",
      "the header is followed by no data rows: nothing to import (was the file saved before its rows were pasted?)",
    );
  }

  private refuse(line: number, column: string, message: string): OrderFileError {
    return new OrderFileError(this.options.file, [{ line, column, message }]);
  }
}

function reportRefusal(): string {
  return (
    `this is a giftjobs report (its columns ${REPORT_ONLY_COLUMNS.join(", ")}), not an order file: ` +
    "to send a campaign's failed rows again use `giftjobs orders retry --campaign NAME`; to import " +
    `its ${RESENT_STATUSES.join(" and ")} rows as new orders, pass --from-report`
  );
}

/** "completed 80, failed_uncertain 2": report rows left out, by status, most first. */
export function leftOutText(leftOut: ReadonlyMap<string, number>): string {
  return [...leftOut.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([status, count]) => `${status} ${count}`)
    .join(", ");
}
