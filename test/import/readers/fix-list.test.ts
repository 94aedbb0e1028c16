import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { afterEach, describe, expect, it } from "vitest";
import { importCampaign } from "../../../src/import/import-campaign.js";
import type { LedgerRow } from "../../../src/ledger/ledger.js";
import { shownMoney } from "../../../src/money.js";
import { sha256 } from "../../../src/sha256.js";
import { type CampaignEnv, campaignEnv, depsOf, giftjobs } from "../../helpers/campaign-env.js";
import { csvFile } from "../../helpers/csv.js";
import { readOrderFile } from "../../helpers/read-items.js";
import { openProduct, xlsxFile } from "../../helpers/xlsx.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function ledgerRows(e: CampaignEnv, campaign: string): Promise<[string, LedgerRow][]> {
  const rows: [string, LedgerRow][] = [];
  for await (const entry of e.ledger.orders.rows(campaign)) rows.push(entry);
  return rows;
}

describe("the --skip-invalid error file is a fix list", () => {
  it("holds the original columns plus error and line; fixed and imported with --append, every row is recorded", async () => {
    const e = await (async () => {
      env = await campaignEnv({}, "fixlist");
      return env;
    })();
    const { product, value } = openProduct(e.index);
    const code = product.code;
    const text =
      "Department,Email Address,SKU,Amount,Ref\n" +
      `Sales,a@example.com,${code},${value},r1\n` +
      `Sales,not-an-email,${code},-5,r2\n` + // two problems
      `IT,b@example.com,${code},${value},r3\n` +
      `IT,c@example.com,NO-SUCH-CODE,${value},r4\n` +
      `HR,d@@example.com,${code},${value},\n`; // no reference
    const file = await csvFile(e, "orders.csv", text);
    const fixList = join(e.dataDir, "fix.csv");
    const first = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "fix", "--yes", "--json"],
      ...["--skip-invalid", "--error-file", fixList],
    ]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 5, valid: 2, invalid: 3, enqueued: 2 });

    const rows = parse(await readFile(fixList, "utf8")) as string[][];
    expect(rows[0]).toEqual([
      "Department",
      "Email Address",
      "SKU",
      "Amount",
      "Ref",
      "error",
      "line",
    ]);
    expect(rows.slice(1).map((r) => [...r.slice(0, 5), r[6]])).toEqual([
      // A leading - would be a formula in a spreadsheet: escaped (see the test further down).
      ["Sales", "not-an-email", code, "'-5", "r2", "3"],
      ["IT", "c@example.com", "NO-SUCH-CODE", value, "r4", "5"],
      // Its product known, the amount is written as money (5.1 -> 5.10): docs/order-files.md.
      ["HR", "d@@example.com", code, shownMoney(value, product.currency), "", "6"],
    ]);
    const errorOf = (i: number) => rows[i]![5]!;
    expect(errorOf(1)).toMatch(/^email: .*not a valid e-mail address; face_value: .*$/);
    expect(errorOf(2)).toMatch(/^product_code: /);
    expect(errorOf(3)).toMatch(/^email: /);

    // Fix the cells in place, as someone would in a spreadsheet; nothing else changes.
    rows[1]![1] = "fixed@example.com";
    rows[1]![3] = value;
    rows[2]![2] = code;
    rows[3]![1] = "d@example.com";
    await writeFile(fixList, stringify(rows));

    const again = await giftjobs(e, [
      ...["orders", "import", fixList, "--campaign", "fix", "--append", "--yes", "--json"],
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, valid: 3, invalid: 0, enqueued: 3 });
    // error and line are recognised, not reported as ignored columns; Department still is.
    expect(again.stderr).toMatch(/ignored columns: "Department" \(/);
    expect(again.stderr).not.toMatch(/"error"|"line"/);

    const recorded = await ledgerRows(e, "fix");
    expect(recorded).toHaveLength(5);
    expect(recorded.map(([, r]) => r.reference ?? "").sort()).toEqual(["", "r1", "r2", "r3", "r4"]);
    // A reference is the identity: the fixed row is the card it always was.
    for (const reference of ["r2", "r4"]) {
      const identity = `ref:${sha256(`ref\n${reference}`)}`;
      expect(recorded.find(([id]) => id === identity)?.[1].reference).toBe(reference);
    }
    // The row without reference gets its identity from its (fixed) content: a new row.
    const [, noRef] = recorded.find(([id]) => id.startsWith("h:"))!;
    expect(noRef.email).toBe("d@example.com");

    // Importing the fix list once more adds nothing: the fixed rows are known.
    const third = await giftjobs(e, ["orders", "import", fixList, "--campaign", "fix", "--json"]);
    expect(JSON.parse(third.stdout)).toMatchObject({ enqueued: 0, already_known: 3 });
  });
});

describe("the fix list of a file that needed --map", () => {
  it("names the mapped columns by their fields, so it imports again without the --map", async () => {
    env = await campaignEnv({}, "fixmap");
    const { product, value } = openProduct(env.index);
    const text =
      "Staff mailbox,Gift,Amount\n" +
      `a@example.com,${product.code},${value}\n` +
      `not-an-email,${product.code},${value}\n`;
    const file = await csvFile(env, "hr.csv", text);
    const fixList = join(env.dataDir, "fix.csv");
    const first = await giftjobs(env, [
      ...["orders", "import", file, "--campaign", "hr", "--yes", "--json", "--skip-invalid"],
      ...["--map", "Staff mailbox=email", "--map", "Gift=product_code", "--error-file", fixList],
    ]);
    expect(first.code, first.stderr).toBe(0);
    const rows = parse(await readFile(fixList, "utf8")) as string[][];
    expect(rows[0]).toEqual(["email", "product_code", "Amount", "error", "line"]);

    rows[1]![0] = "b@example.com";
    await writeFile(fixList, stringify(rows));
    const again = await giftjobs(env, [
      ...["orders", "import", fixList, "--campaign", "hr", "--append", "--yes", "--json"],
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 1, valid: 1, enqueued: 1 });
    expect(await ledgerRows(env, "hr")).toHaveLength(2);
  });
});

describe("a fix list of a fix list", () => {
  it("keeps one error and one line column; an .xlsx row's formula comes back as the value shown", async () => {
    env = await campaignEnv({}, "fixlist2");
    const e = env;
    const { product, value } = openProduct(e.index);
    const book = await xlsxFile(join(e.dataDir, "orders.xlsx"), {
      Orders: [
        ["email", "product_code", "face_value", "reference"],
        ["a@example.com", product.code, { formula: "1+1", result: 2 }, "x1"],
      ],
    });
    const first = join(e.dataDir, "fix1.csv");
    const r1 = await importCampaign(
      { file: book, campaign: "f2", skipInvalid: true, errorFile: first },
      depsOf(e),
    );
    expect(r1).toMatchObject({ invalid: 1, error_file: first });
    const rows1 = parse(await readFile(first, "utf8")) as string[][];
    expect(rows1[1]!.slice(0, 4)).toEqual(["a@example.com", product.code, "2.00", "x1"]);
    expect(rows1[1]![4]).toMatch(/^face_value: cell C2 holds a formula \(=1\+1\)/);

    // Still wrong after a first fix: the next error file has one error and one line column.
    rows1[1]![1] = "NO-SUCH-CODE";
    rows1[1]![2] = value;
    const fixed = join(e.dataDir, "fixed1.csv");
    await writeFile(fixed, stringify(rows1));
    const second = join(e.dataDir, "fix2.csv");
    const r2 = await importCampaign(
      { file: fixed, campaign: "f2", skipInvalid: true, errorFile: second, append: true },
      depsOf(e),
    );
    expect(r2).toMatchObject({ invalid: 1 });
    const rows2 = parse(await readFile(second, "utf8")) as string[][];
    expect(rows2[0]).toEqual(["email", "product_code", "face_value", "reference", "error", "line"]);
    expect(rows2[1]!.slice(0, 4)).toEqual(["a@example.com", "NO-SUCH-CODE", value, "x1"]);
    expect(rows2[1]![4]).toMatch(/^product_code: /);
    expect(rows2[1]![5]).toBe("2");
  });
});

/** Each row's fields and ignored cells as the import reads them, product_code left out. */
async function readRows(path: string) {
  const rows = [];
  for await (const item of readOrderFile(path)) {
    if (item.kind !== "row") throw new Error(`line ${item.line}: ${item.error.message}`);
    const { product_code: _, ...fields } = item.fields;
    rows.push({ fields, ignored: { ...item.ignored } });
  }
  return rows;
}

describe("cells that look like formulas in the error file", () => {
  it("are never live formulas there, and its re-import gives the original values", async () => {
    env = await campaignEnv({}, "fixlist3");
    const e = env;
    const { product, value } = openProduct(e.index);
    const original = stringify([
      [
        "email",
        "product_code",
        "face_value",
        "reference",
        "metadata.phone",
        "metadata.adjust",
        "metadata.note",
        "Notes",
      ],
      [
        "-dash@example.com",
        "NO-SUCH-CODE",
        value,
        "q1",
        "+44 7700 900123",
        "-5",
        "'quoted",
        '=HYPERLINK("http://evil.example/","click")',
      ],
      ["=eq@example.com", "NO-SUCH-CODE", value, "q2", "@handle", "''=x", "\t=1+1", "@SUM(A1:A9)"],
      ["+tag@example.com", "NO-SUCH-CODE", value, "q3", "-", "'", "plain", "+1"],
    ]);
    const file = await csvFile(e, "formulas.csv", original);
    const fixList = join(e.dataDir, "fix.csv");
    const first = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "esc", "--yes", "--json"],
      ...["--skip-invalid", "--error-file", fixList],
    ]);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 3, invalid: 3 });

    // Not one cell a spreadsheet would run: each such cell has its apostrophe.
    const rows = parse(await readFile(fixList, "utf8")) as string[][];
    expect(rows.flat().filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);
    expect(rows[1]!.slice(0, 1)).toEqual(["'-dash@example.com"]);
    expect(rows[1]![7]).toBe(`'=HYPERLINK("http://evil.example/","click")`);
    expect(rows[1]![6]).toBe("''quoted");

    // Fixed as someone would: the product code, nothing else.
    for (const row of rows.slice(1)) row[1] = product.code;
    await writeFile(fixList, stringify(rows));
    expect(await readRows(fixList)).toEqual(await readRows(file));
    // Saved as a workbook first, it reads the same.
    const book = await xlsxFile(join(e.dataDir, "fix.xlsx"), { Fix: rows });
    expect(await readRows(book)).toEqual(await readRows(file));

    const again = await giftjobs(e, [
      ...["orders", "import", fixList, "--campaign", "esc", "--append", "--yes", "--json"],
    ]);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, valid: 3, enqueued: 3 });
    const recorded = await ledgerRows(e, "esc");
    const emails = recorded.map(([, r]) => r.email).sort();
    expect(emails).toEqual(["+tag@example.com", "-dash@example.com", "=eq@example.com"]);
    const numbers = recorded.map(([, r]) => r.order);
    const orders = await e.ledger.orders.getOrders("esc", numbers);
    // The row's own metadata (an order also carries giftjobs' tags: src/orders/order-tags.ts).
    const own = (m: Record<string, string> | undefined) =>
      Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !k.startsWith("giftjobs_")));
    const metadata = orders
      .map((o) => own(o?.metadata))
      .sort((a, b) => (a.phone! < b.phone! ? -1 : 1));
    expect(metadata).toEqual([
      { phone: "+44 7700 900123", adjust: "-5", note: "'quoted" },
      { phone: "-", adjust: "'", note: "plain" },
      { phone: "@handle", adjust: "''=x", note: "\t=1+1" },
    ]);
  });
});
