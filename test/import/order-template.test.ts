import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, describe, expect, it } from "vitest";
import { isOrderable } from "../../src/catalog/orderable.js";
import { TEMPLATE_COLUMNS } from "../../src/import/order-template.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { runCli } from "../helpers/cli.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";
import { sheetRows } from "../helpers/xlsx.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("orders template", () => {
  it("writes a CSV to stdout and an .xlsx with a Products sheet; both import as they are with --allow-example", async () => {
    const e = await (async () => {
      env = await campaignEnv({}, "template");
      return env;
    })();
    const csv = await giftjobs(e, ["orders", "template"]);
    expect(csv.code).toBe(0);
    const rows = parse(csv.stdout) as string[][];
    expect(rows[0]).toEqual([...TEMPLATE_COLUMNS]);
    expect(rows).toHaveLength(2);
    const code = rows[1]![1]!;
    expect(e.index.entries[code]).toMatchObject({ is_orderable: true, state: "LIVE" });

    const csvOut = join(e.dataDir, "template.csv");
    expect((await giftjobs(e, ["orders", "template", "--out", csvOut])).code).toBe(0);
    expect(await readFile(csvOut, "utf8")).toBe(csv.stdout);

    const xlsxOut = join(e.dataDir, "template.xlsx");
    const xl = await giftjobs(e, ["orders", "template", "--out", xlsxOut, "--orderable"]);
    expect(xl.code).toBe(0);
    expect(await sheetRows(xlsxOut, "Orders")).toEqual(rows);
    const products = await sheetRows(xlsxOut, "Products");
    expect(products[0]).toEqual(["code", "name", "currency", "denominations", "state"]);
    const live = Object.values(e.index.entries).filter((p) => p.denominations && isOrderable(p));
    expect(products).toHaveLength(live.length + 1);
    expect(products.find((p) => p[0] === code)?.[2]).toBe(e.index.entries[code]!.currency);

    for (const [file, campaign] of [
      [csvOut, "tcsv"],
      [xlsxOut, "txlsx"],
    ] as const) {
      // The example row is refused without --allow-example (test/import/risky-files.test.ts).
      const run = await giftjobs(e, [
        "orders",
        "import",
        file,
        "--campaign",
        campaign,
        "--yes",
        "--allow-example",
        // The same example row in both: the second pays it again, knowingly.
        "--allow-repeats",
      ]);
      // The workbook has a Products sheet beside Orders, so the import names the sheet it read.
      expect(run.stderr).toBe(file === xlsxOut ? 'sheet "Orders" read\n' : "");
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("rows 1: 1 valid, 0 invalid");
      expect(await e.ledger.dispatch.pendingCount(campaign)).toBe(1);
    }
  });

  it("--country picks a product redeemable there; a bad --out is refused", async () => {
    const e = await (async () => {
      env = await campaignEnv({}, "template-cc");
      return env;
    })();
    const country = Object.values(e.index.entries).find(
      (p) => p.is_orderable && p.state === "LIVE" && p.denominations && p.countries.length > 0,
    )!.countries[0]!;
    const run = await giftjobs(e, ["orders", "template", "--country", country.toLowerCase()]);
    expect(run.code).toBe(0);
    const code = (parse(run.stdout) as string[][])[1]![1]!;
    expect(e.index.entries[code]?.countries).toContain(country);

    const bad = await giftjobs(e, ["orders", "template", "--out", join(e.dataDir, "t.ods")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/name a \.csv or \.xlsx file/);
  });

  it("without a snapshot: a placeholder product code, said on stderr", async () => {
    const dataDir = await tmpDir("template-none");
    try {
      const run = await runCli(["orders", "template"], {
        GIFTJOBS_DATA_DIR: dataDir,
        GIFTJOBS_LOG_LEVEL: "warn",
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        "email,product_code,face_value,reference,description\nrecipient@example.com,PRODUCT-CODE,25.00,example-0001,Thank you!\n",
      );
      expect(run.stderr).toMatch(/^note: no catalog snapshot in .*placeholder/);
    } finally {
      await removeDir(dataDir);
    }
  });
});
