import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readRecords } from "../../../src/import/readers/csv-records.js";
import { recordsInThread } from "../../../src/import/readers/csv-records-thread.js";
import type { CsvItem, ReadOrderRowsOptions } from "../../../src/import/readers/csv-rows.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../../helpers/campaign-env.js";
import { csvFile, validCsv } from "../../helpers/csv.js";
import { readOrderRows } from "../../helpers/read-items.js";
import { tmpDir } from "../../helpers/tmp-dir.js";

// A big file's records are parsed in a worker thread (csv-records-thread.ts), a small one's in
// the import's own: both must give the same rows, the same problems and the same errors.

const HEADER = "email,product_code,face_value,description";

/** What reading `path` gives: its items, or the error's type and message. */
async function outcome(path: string, options: ReadOrderRowsOptions): Promise<unknown> {
  const items: CsvItem[] = [];
  try {
    for await (const item of readOrderRows(path, options)) items.push(item);
    return { items };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

/** Each file: what it is, its bytes, and whether reading it ends in an error. */
const FILES: [string, string | Buffer, "rows" | "error", ReadOrderRowsOptions?][] = [
  [
    "multi-line cells, blank lines, a BOM, CRLF",
    `\ufeff${HEADER}\r\na@b.co,X1,1,one\r\n\r\na@b.co,X1,2,"multi\r\nline\n""quoted"""\r\n,,,\r\na@b.co,X1,3,last`,
    "rows",
  ],
  [
    "title rows, a totals row, a row of the wrong length",
    `Spring campaign\n\n${HEADER}\na@b.co,X1,1,x\na@b.co,X1\nTotal,,1,\n`,
    "rows",
  ],
  ["semicolons", `${HEADER.replaceAll(",", ";")}\na@b.co;X1;1,50;x\n`, "rows", { delimiter: ";" }],
  [
    "UTF-16LE with its BOM",
    Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`${HEADER}\nä@b.co,X1,1,ü\n`, "utf16le"),
    ]),
    "rows",
    { encoding: "utf-16le" },
  ],
  ["a quote never closed", `${HEADER}\na@b.co,X1,1,x\na@b.co,X1,2,"open\nb@b.co,X1,3,y\n`, "error"],
  ["a duplicate column", `${HEADER},email\na@b.co,X1,1,x,y\n`, "error"],
  ["no header", "just,some\nwords,here\n", "error"],
];

describe("a CSV's records parsed in a worker thread", () => {
  it.each(FILES)("give what the import's own thread gives: %s", async (_, text, ends, options) => {
    const dir = await tmpDir("csv-thread");
    const path = join(dir, "orders.csv");
    await writeFile(path, text);
    const here = await outcome(path, { ...options, threadFrom: Number.POSITIVE_INFINITY });
    const there = await outcome(path, { ...options, threadFrom: 0 });
    expect(there).toEqual(here);
    expect(Object.keys(there as object)[0]).toBe(ends === "rows" ? "items" : "error");
  });

  it("give the same records, lines and byte counts, and stop when told", async () => {
    const dir = await tmpDir("csv-thread");
    const path = join(dir, "orders.csv");
    const rows = Array.from({ length: 9000 }, (_, i) => `p${i}@b.co,X1,${i},"a\nb"`);
    await writeFile(path, `${HEADER}\n${rows.join("\n")}\n`);
    const reading = { delimiter: "," };
    const flat = async (source: ReturnType<typeof readRecords>) => {
      const records = [];
      for await (const batch of source.batches) records.push(...batch);
      await source.close();
      return records;
    };
    const here = await flat(readRecords(path, reading));
    expect(here).toHaveLength(9001);
    expect(await flat(recordsInThread(path, reading))).toEqual(here);
    // A reader that stops early ends the thread: close() resolves, nothing more is read.
    const early = recordsInThread(path, reading);
    for await (const batch of early.batches) {
      expect(batch[0]?.line).toBe(1);
      break;
    }
    await early.close();
  });
});

describe("an import of a CSV over 1 MiB", () => {
  let env: CampaignEnv | undefined;
  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  it("parses it in the CLI's own worker (bundled beside it) and records every row on its line", async () => {
    env = await campaignEnv({}, "thread");
    const { text } = validCsv(env.index, 25_000);
    const file = await csvFile(env, "orders.csv", text);
    expect((await stat(file)).size).toBeGreaterThan(1 << 20);
    const run = await giftjobs(env, ["orders", "import", file, "--campaign", "big", "--yes"]);
    expect(run.code, run.stderr).toBe(0);
    const lines: number[] = [];
    for await (const [, row] of env.ledger.orders.rows("big")) lines.push(row.line);
    expect(lines.sort((a, b) => a - b)).toEqual(Array.from({ length: 25_000 }, (_, i) => i + 2));
  });
});
