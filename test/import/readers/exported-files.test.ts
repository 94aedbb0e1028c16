import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { afterEach, describe, expect, it } from "vitest";
import type { LedgerRow } from "../../../src/ledger/ledger.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../../helpers/campaign-env.js";
import { recordedBodies } from "../../helpers/ledger-fixtures.js";
import { openProduct } from "../../helpers/xlsx.js";

// Spreadsheets as exported (docs/order-files.md, "Spreadsheets as exported"): the CLI against a
// real sandbox over HTTP and real Redis, each test under its own prefix.

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "exported");
  return env;
}

/** A workbook of sheets (name -> rows), some of them hidden as Excel hides them. */
async function workbook(
  path: string,
  sheets: { name: string; rows: ExcelJS.CellValue[][]; state?: "hidden" | "veryHidden" }[],
): Promise<string> {
  const book = new ExcelJS.Workbook();
  for (const { name, rows, state } of sheets) {
    const sheet = book.addWorksheet(name, { state: state ?? "visible" });
    for (const row of rows) sheet.addRow(row);
  }
  await book.xlsx.writeFile(path);
  return path;
}

async function ledgerRows(e: CampaignEnv, campaign: string): Promise<LedgerRow[]> {
  const rows: LedgerRow[] = [];
  for await (const [, row] of e.ledger.orders.rows(campaign)) rows.push(row);
  return rows.sort((a, b) => a.line - b.line);
}

/** Excel's "Unicode Text": UTF-16 with its BOM, tab-separated, CRLF. */
function unicodeText(text: string, order: "le" | "be"): Buffer {
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
  return order === "le" ? le : le.swap16();
}

describe("a workbook as a finance team exports it", () => {
  it("skips the hidden first sheet, the title rows and the totals row, saying so; lines stay the sheet's rows", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const path = await workbook(join(e.dataDir, "finance.xlsx"), [
      {
        name: "Lookup",
        state: "hidden",
        rows: [
          ["code", "name"],
          [product.code, "a card"],
        ],
      },
      {
        name: "Orders",
        rows: [
          ["Q4 gift cards: sales team"],
          ["exported 2026-11-20", "", "by finance"],
          ["Email Address", "SKU", "Amount", "Employee ID"],
          ["a@example.com", product.code, Number(value), "E-1"],
          ["b@example.com", product.code, Number(value), "E-2"],
          ["Total", "", { formula: "SUM(C4:C5)", result: Number(value) * 2 }, ""],
        ],
      },
      { name: "Notes", rows: [["nothing here"]] },
    ]);
    const run = await giftjobs(e, ["orders", "import", path, "--campaign", "fin", "--yes"]);
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toContain('sheet "Orders" read (hidden sheet "Lookup" skipped)');
    expect(lines).toContain("header found on row 3; rows 1-2 skipped");
    expect(lines).toContain('row 6: a totals row ("Total") left out: it is not an order');
    expect(run.stderr).not.toMatch(/formula|paste/);
    expect(run.stdout).toContain("rows 2: 2 valid, 0 invalid");
    const rows = await ledgerRows(e, "fin");
    expect(rows.map((r) => [r.line, r.reference])).toEqual([
      [4, "E-1"],
      [5, "E-2"],
    ]);

    const json = await giftjobs(e, [
      ...["orders", "import", path, "--campaign", "fin2", "--dry-run", "--json", "--allow-repeats"],
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).file).toEqual({
      sheet: "Orders",
      hidden_sheets_skipped: ["Lookup"],
      header_line: 3,
      skipped_lines: [1, 2],
      totals_rows_left_out: [{ line: 6, label: "Total" }],
    });
  });

  it("reads a hidden sheet when --sheet names it, and names the sheet when its header is refused", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const path = await workbook(join(e.dataDir, "hidden.xlsx"), [
      { name: "Lookup", state: "veryHidden", rows: [["code", "name"]] },
      {
        name: "Orders",
        rows: [
          ["email", "product_code", "face_value"],
          ["a@example.com", product.code, Number(value)],
        ],
      },
    ]);
    const named = await giftjobs(e, [
      ...["orders", "import", path, "--campaign", "h1", "--dry-run", "--sheet", "Lookup"],
    ]);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain(`${path} (sheet "Lookup"): line 1, column email`);
    expect(named.stderr).toContain(`the file's headers: "code", "name"`);

    const all = await workbook(join(e.dataDir, "all-hidden.xlsx"), [
      { name: "A", state: "hidden", rows: [["email"]] },
      { name: "B", state: "hidden", rows: [["email"]] },
    ]);
    const none = await giftjobs(e, ["orders", "import", all, "--campaign", "h2", "--dry-run"]);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe(
      `giftjobs: error: ${all}: every sheet is hidden ("A", "B"); name the one to read with --sheet`,
    );
  });
});

describe("a CSV with title rows and totals rows", () => {
  it("finds the header below the titles; errors name the file's own lines; --header-row names it", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const text = [
      "Gift cards for the Berlin office,,",
      ",,",
      "email,product_code,face_value",
      `a@example.com,${product.code},${value}`,
      `not-an-email,${product.code},${value}`,
    ].join("\n");
    const file = join(e.dataDir, "titled.csv");
    await writeFile(file, `${text}\n`);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "t1", "--dry-run"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("header found on line 3; line 1 skipped");
    expect(run.stderr).toMatch(/^line 5, column email: /m);

    const named = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "t2", "--dry-run", "--header-row", "3"],
    ]);
    expect(named.stderr).toContain("header on line 3; line 1 skipped");
    expect(named.stderr).toMatch(/^line 5, column email: /m);

    const past = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "t3", "--dry-run", "--header-row", "9"],
    ]);
    expect(past.code).toBe(2);
    expect(past.stderr.trim()).toBe(
      `giftjobs: error: ${file}: line 9: --header-row 9: the file has no row 9 (its last row is 5)`,
    );
    const blank = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "t4", "--dry-run", "--header-row", "2"],
    ]);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain("--header-row 2: row 2 is blank or inside a cell");
  });

  it("leaves out a clear totals row and keeps an order whose first cell says Total", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const text = [
      "reference,email,product_code,face_value",
      `Total-1,a@example.com,${product.code},${value}`,
      `r2,b@example.com,${product.code},${value}`,
      `Subtotal,,,${Number(value) * 2}`,
      `r3,c@example.com,${product.code},${value}`,
      `Grand total:,3,,${Number(value) * 3}`,
    ].join("\n");
    const file = join(e.dataDir, "totals.csv");
    await writeFile(file, `${text}\n`);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "tot", "--yes"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('line 4: a totals row ("Subtotal") left out: it is not an order');
    expect(run.stderr).toContain(
      'line 6: a totals row ("Grand total:") left out: it is not an order',
    );
    expect(run.stdout).toContain("rows 3: 3 valid, 0 invalid");
    const rows = await ledgerRows(e, "tot");
    expect(rows.map((r) => r.reference)).toEqual(["Total-1", "r2", "r3"]);
    const json = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "tot2", "--dry-run", "--json", "--allow-repeats"],
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      rows: 3,
      file: {
        header_line: 1,
        skipped_lines: [],
        totals_rows_left_out: [
          { line: 4, label: "Subtotal" },
          { line: 6, label: "Grand total:" },
        ],
      },
    });

    // A row that names a recipient is an order, whatever its first cell says: checked as one.
    const order = join(e.dataDir, "order.csv");
    await writeFile(order, `reference,email,product_code,face_value\nTotal,x@,,${value}\n`);
    const checked = await giftjobs(e, ["orders", "import", order, "--campaign", "o", "--dry-run"]);
    expect(checked.code).toBe(2);
    expect(checked.stderr).not.toMatch(/totals row/);
    expect(checked.stderr).toMatch(/^line 2, column email: /m);
  });
});

describe("a missing required column", () => {
  it("lists the file's headers and the --map that fixes it; that --map imports the file", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const file = join(e.dataDir, "hr.csv");
    await writeFile(
      file,
      `Work Email,Name,Product Code,Amount\na@example.com,Ann,${product.code},${value}\n`,
    );
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "hr", "--dry-run"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      `giftjobs: error: ${file}: line 1, column email: missing required column email; the file's headers: "Work Email", "Name", "Product Code", "Amount"; try --map 'Work Email=email'`,
    );
    const json = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "hr", "--dry-run", "--json"],
    ]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).errors[0].message).toContain("try --map 'Work Email=email'");

    const fixed = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "hr", "--dry-run", "--map", "Work Email=email"],
    ]);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain("rows 1: 1 valid, 0 invalid");
  });
});

describe("Excel's Unicode Text (UTF-16 with a BOM, tab-separated)", () => {
  it("imports UTF-16LE and reads UTF-16BE alike; lines are the file's", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const text = [
      "Email Address\tProduct Code\tAmount\tNote",
      `zoe@example.com\t${product.code}\t${value}\tFür Zoë, 谢谢`,
      `b@example.com\t${product.code}\t${value}\t"two\tparts"`,
      "",
    ].join("\r\n");
    const le = join(e.dataDir, "unicode.txt");
    await writeFile(le, unicodeText(text, "le"));
    const run = await giftjobs(e, ["orders", "import", le, "--campaign", "u16", "--yes"]);
    expect(run.stderr).not.toMatch(/UTF-16|binary/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("rows 2: 2 valid, 0 invalid");
    const rows = await ledgerRows(e, "u16");
    expect(rows.map((r) => [r.line, r.email])).toEqual([
      [2, "zoe@example.com"],
      [3, "b@example.com"],
    ]);
    const bodies = JSON.stringify([...(await recordedBodies(e.ledger, "u16")).values()]);
    expect(bodies).toContain("Für Zoë, 谢谢");
    expect(bodies).toContain("two\\tparts");

    const be = join(e.dataDir, "unicode-be.txt");
    await writeFile(be, unicodeText(`${text}not-an-email\t${product.code}\t${value}\tx\r\n`, "be"));
    const bad = await giftjobs(e, ["orders", "import", be, "--campaign", "u16be", "--dry-run"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^line 4, column email: /m);
    expect(bad.stdout).toBe("");
  });
});

describe("warnings about names are bounded", () => {
  it("a file with 100,000 unknown columns gets a short line, and a short refusal", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    // Short names: the header stays within a record's 1,000,000 characters.
    const extra = Array.from({ length: 100_000 }, (_, i) => `c${i + 1}`);
    const header = ["email", "product_code", "face_value", ...extra].join(",");
    const row = [`a@example.com,${product.code},${value}`, ...extra.map(() => "")].join(",");
    const file = join(e.dataDir, "wide.csv");
    await writeFile(file, `${header}\n${row}\n`);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "wide", "--dry-run"]);
    expect(run.code).toBe(0);
    const ignored = run.stderr.split("\n").filter((l) => l.startsWith("ignored columns: "));
    expect(ignored).toHaveLength(1);
    expect(ignored[0]).toMatch(/^ignored columns: "c1", "c2", "c3", "c4", "c5" and 99,995 more \(/);
    expect(ignored[0]!.length).toBeLessThan(300);

    const strict = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "wide", "--dry-run", "--strict-columns"],
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("and 99,995 more unknown columns");
    expect(strict.stderr.length).toBeLessThan(2000);
  });
});
