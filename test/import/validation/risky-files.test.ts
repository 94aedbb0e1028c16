import { describe, expect, it } from "vitest";
import type { CsvItem, HeaderReport } from "../../../src/import/readers/csv-rows.js";
import { OrderFileError } from "../../../src/import/readers/order-file-error.js";
import { leftOutText, RiskyFileCheck } from "../../../src/import/validation/risky-files.js";

/** docs/order-files.md, "Files that are refused": the check alone, on items as a reader gives them. */
const REPORT = [
  "line",
  "reference",
  "email",
  "product_code",
  "face_value",
  "currency",
  "status",
].concat(["order_id", "item_id", "idempotency_key"]);

function header(names: string[], line = 1): HeaderReport {
  return { line, names, renamed: [], ignored: [] } as unknown as HeaderReport;
}

function item(line: number, cells: string[], fields: Record<string, string> = {}): CsvItem {
  return { kind: "row", line, cells, fields };
}

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OrderFileError);
    return (error as OrderFileError).message;
  }
  throw new Error("not refused");
}

describe("RiskyFileCheck", () => {
  it("with --from-report: admits failed_final and cancelled rows, counts the others by status", () => {
    const check = new RiskyFileCheck({ file: "r.csv", fromReport: true });
    check.onHeader(header(REPORT));
    const statuses = ["failed_final", "completed", "cancelled", "completed", "weird", "", "queued"];
    const admitted = statuses.map((status, i) =>
      check.admit(item(i + 2, ["1", "", "a@b.co", "X", "5", "USD", status])),
    );
    expect(admitted).toEqual([true, false, true, false, false, false, false]);
    // A status no row can have is "other": the counts stay a few whatever the file holds.
    expect(leftOutText(check.leftOut)).toBe("completed 2, other 2, queued 1");
    expect(() => check.onEnd(2)).not.toThrow();
  });

  it("refuses --from-report on a file that is not a report", () => {
    const check = new RiskyFileCheck({ file: "o.csv", fromReport: true });
    expect(refusal(() => check.onHeader(header(["email", "product_code", "face_value"], 3)))).toBe(
      "o.csv: line 3: --from-report: this is not a giftjobs report (its header has no status, order_id, idempotency_key columns); import it without --from-report",
    );
  });

  it("finds the example row in any case and with spaces; --allow-example admits it", () => {
    const check = new RiskyFileCheck({ file: "t.csv" });
    check.onHeader(header(["email", "product_code", "face_value"]));
    expect(check.admit(item(2, [], { email: "someone@example.com" }))).toBe(true);
    expect(refusal(() => check.admit(item(3, [], { email: " Recipient@Example.com " })))).toMatch(
      /^t\.csv: line 3, column email: this is the example row/,
    );
    const allowed = new RiskyFileCheck({ file: "t.csv", allowExample: true });
    expect(allowed.admit(item(2, [], { email: "recipient@example.com" }))).toBe(true);
  });

  it("refuses a file that ended with no rows, at its header's line", () => {
    const check = new RiskyFileCheck({ file: "e.csv" });
    check.onHeader(header(["email", "product_code", "face_value"], 4));
    expect(refusal(() => check.onEnd(0))).toMatch(
      /^e\.csv: line 4: the header is followed by no data rows/,
    );
  });
});
