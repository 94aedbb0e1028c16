import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { validateRow } from "../../../src/import/validation/row-validation.js";
import { findGc } from "../../helpers/gc.js";
import { readOrderRows } from "../../helpers/read-items.js";

const ROWS = 200_000;

/** A CSV made on the fly, one chunk of 500 rows at a time: the file never exists whole. */
function generatedCsv(rows: number): Readable {
  let next = 0;
  return new Readable({
    read() {
      if (next === 0) this.push("email,product_code,face_value,description,metadata.batch\n");
      if (next >= rows) {
        this.push(null);
        return;
      }
      const lines: string[] = [];
      for (const end = Math.min(next + 500, rows); next < end; next++) {
        // Every 1000th row has a two-line description, so line numbers drift from row numbers.
        const description = next % 1000 === 0 ? `"first\nsecond ${next}"` : `card ${next}`;
        lines.push(
          `user${next}@example.com,AMZ-US,${(next % 90) + 10}.50,${description},b${next % 7}`,
        );
      }
      this.push(`${lines.join("\n")}\n`);
    },
  });
}

const gc = findGc();

function heapAfterGc(): number {
  gc?.();
  return process.memoryUsage().heapUsed;
}

describe("readOrderRows memory", () => {
  it("reads 200,000 rows with bounded heap growth", async () => {
    let count = 0;
    let lastLine = 0;
    let baseline = 0;
    let peak = 0;
    for await (const item of readOrderRows(generatedCsv(ROWS))) {
      expect(item.kind).toBe("row");
      if (item.kind === "row" && !validateRow(item).ok) throw new Error(`row ${item.line} invalid`);
      count++;
      lastLine = item.line;
      if (count === 10_000) baseline = heapAfterGc();
      else if (count % 10_000 === 0) peak = Math.max(peak, heapAfterGc());
    }
    expect(count).toBe(ROWS);
    // 200 two-line descriptions push the last row 200 lines down; header is line 1.
    expect(lastLine).toBe(ROWS + 1 + 200);
    // Collecting the rows would retain about 100 MB. Without gc, heapUsed also counts garbage
    // (about 40 MB seen), hence the generous bound then.
    const bound = (gc ? 20 : 60) * 1024 * 1024;
    expect(peak - baseline).toBeLessThan(bound);
  });
});
