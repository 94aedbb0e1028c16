import { join } from "node:path";
import ExcelJS from "exceljs";
import { afterEach, describe, expect, it } from "vitest";
import { SHARED_STRINGS_LIMITS } from "../../../src/import/readers/shared-strings.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../../helpers/campaign-env.js";
import { openProduct, xlsxFile } from "../../helpers/xlsx.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "xlsx-limits");
  return env;
}

/**
 * A small file whose shared strings table unpacks past the limit: 10 MB strings that differ in
 * their last characters compress to almost nothing, as a crafted workbook's would.
 */
async function bloatedWorkbook(path: string, bytes: number): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: true,
  });
  const sheet = workbook.addWorksheet("Orders");
  sheet.addRow(["email", "product_code", "face_value", "note"]).commit();
  const block = "x".repeat(10 * 2 ** 20);
  for (let i = 0; i * block.length <= bytes; i++)
    sheet.addRow([`a${i}@example.com`, "AMZ-US", 25, `${block}${i}`]).commit();
  sheet.commit();
  await workbook.commit();
}

describe("an .xlsx workbook past the memory limits", () => {
  it("a shared strings table past the limit is refused in one line, nothing recorded", async () => {
    const e = await setup();
    const file = join(e.dataDir, "bloated.xlsx");
    await bloatedWorkbook(file, SHARED_STRINGS_LIMITS.bytes);
    // Its 10 MB strings pack 200 to 1, past the default ratio (xlsx-bomb.test.ts): the flag
    // takes it, so that the table's own limit is what refuses it.
    const run = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "big", "--yes"],
      ...["--max-unzipped-mb", "300"],
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^giftjobs: error: ${file}: its shared strings table passes the limit of 8,000,000 strings or 128 MB of text \\(\\d+ strings, 12\\d MB read\\): it would be held in memory whole; save the sheet as CSV UTF-8 and import that$`,
        ),
      ),
    ]);
    expect(await e.ledger.campaigns.exists("big")).toBe(false);
  });

  it("a row longer than a CSV record may be is refused in one line, naming its row", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const file = await xlsxFile(join(e.dataDir, "wide.xlsx"), {
      Orders: [
        ["email", "product_code", "face_value", "description"],
        ["a@example.com", product.code, value, "fine"],
        ["b@example.com", product.code, value, "y".repeat(1_000_001)],
      ],
    });
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "wide", "--yes"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toEqual([
      `giftjobs: error: ${file}: line 3: a row longer than 1,000,000 characters`,
    ]);
    expect(await e.ledger.campaigns.exists("wide")).toBe(false);
  });
});
