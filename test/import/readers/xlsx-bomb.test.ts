import { watch } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../../src/errors/user-error.js";
import { readXlsxRows } from "../../../src/import/readers/xlsx-rows.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../../helpers/campaign-env.js";
import { tmpDir } from "../../helpers/tmp-dir.js";
import { openProduct, xlsxFile } from "../../helpers/xlsx.js";
import { writeXlsxBomb } from "../../helpers/zip-bomb.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "xlsx-bomb");
  return env;
}

/**
 * What a folder holds, tsx's cache left out: the CLI runs from the sources through tsx, which
 * keeps its compiled files in TMPDIR; the temporary files exceljs writes are `tmp-PID-...`.
 */
async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !name.startsWith("tsx-"));
}

/** `orders import FILE --dry-run` with TMPDIR of its own. */
async function dryRun(e: CampaignEnv, file: string, tmp: string, flags: string[] = []) {
  const args = ["orders", "import", file, "--campaign", "bomb", "--dry-run", ...flags];
  return giftjobs(e, args, { TMPDIR: tmp });
}

describe("an .xlsx workbook that unpacks past the limits (a zip bomb)", () => {
  it("is refused before anything is unpacked or written, in one line, --dry-run or --json", async () => {
    const e = await setup();
    const tmp = await tmpDir("bomb-tmp");
    const file = await writeXlsxBomb(join(e.dataDir, "bomb.xlsx"), 300);
    const run = await dryRun(e, file, tmp);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    const line =
      `giftjobs: error: ${file}: refused before unpacking: its entries would unpack to 300 MB, past the limit of 200 MB ` +
      `("xl/worksheets/sheet1.xml" alone 300 MB); if the workbook is genuine, raise the limit with --max-unzipped-mb 301`;
    expect(run.stderr.trim().split("\n")).toEqual([line]);
    expect(await listing(tmp)).toEqual([]);

    const json = await dryRun(e, file, tmp, ["--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).errors).toEqual([
      { line: null, message: line.replace("giftjobs: error: ", "") },
    ]);
    expect(await listing(tmp)).toEqual([]);
    expect(await e.ledger.campaigns.exists("bomb")).toBe(false);
  });

  it("an entry past 10 MB that unpacks over 100 times its packed size is refused; --max-unzipped-mb takes it", async () => {
    const e = await setup();
    const tmp = await tmpDir("bomb-tmp");
    const file = await writeXlsxBomb(join(e.dataDir, "dense.xlsx"), 12);
    const refused = await dryRun(e, file, tmp);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^giftjobs: error: .*dense\.xlsx: refused before unpacking: "xl\/worksheets\/sheet1\.xml" unpacks to 12 MB from \d+ KB, \d{3} times its packed size \(a zip bomb\? at most 100 times for an entry past 10 MB\); if the workbook is genuine, raise the limit with --max-unzipped-mb 13$/,
      ),
    ]);

    // A limit given is the operator's word: the ratio is no longer checked, the size still is.
    const taken = await dryRun(e, file, tmp, ["--max-unzipped-mb", "13"]);
    // Read to its end: its header has no rows under it, refused as such (not for its size).
    expect(taken.stderr).not.toMatch(/unpack/);
    expect(taken.stderr.trim()).toMatch(
      /dense\.xlsx: line 1: the header is followed by no data rows/,
    );
    expect(taken.code).toBe(2);
    const small = await dryRun(e, file, tmp, ["--max-unzipped-mb", "5"]);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/would unpack to 12 MB, past the limit of 5\.0 MB/);
    expect(await listing(tmp)).toEqual([]);
  });

  it("a zip whose headers understate the sheet is stopped as it unpacks, its temporary file removed at once", async () => {
    const dir = await tmpDir("bomb-liar");
    const file = await writeXlsxBomb(join(dir, "liar.xlsx"), 40, { statedMb: 1 });
    const tmp = await tmpDir("bomb-tmp");
    const made: string[] = [];
    const watcher = watch(tmp, (_, name) => name && made.push(name));
    const before = process.env.TMPDIR;
    // exceljs asks tmp for a file in os.tmpdir(), which reads TMPDIR at each call.
    process.env.TMPDIR = tmp;
    const read = async (options: { maxUnzippedBytes?: number }) => {
      const rows = [];
      for await (const batch of readXlsxRows(file, options)) rows.push(...batch);
      return rows;
    };
    try {
      const past = read({ maxUnzippedBytes: 20 * 2 ** 20 });
      await expect(past).rejects.toThrow(UserError);
      await expect(past).rejects.toThrow(
        `${file}: "xl/worksheets/sheet1.xml" unpacks past the limit of 20 MB for the whole workbook, more than the zip's directory states (a crafted file?); if the workbook is genuine, raise the limit with --max-unzipped-mb N`,
      );
      // With the default limits, its ratio stops it sooner.
      await expect(read({})).rejects.toThrow(
        /"xl\/worksheets\/sheet1\.xml" unpacks to over 1\d MB from \d+ KB, over 10\d times its packed size .*more than the zip's directory states/,
      );
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      watcher.close();
    }
    // exceljs had begun its temporary file; nothing of it is left, nor a descriptor open on it.
    expect(made.some((name) => name.startsWith("tmp-"))).toBe(true);
    expect(await listing(tmp)).toEqual([]);
    const fds = await readdir("/proc/self/fd").catch(() => []);
    const open = await Promise.all(
      fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")),
    );
    expect(open.filter((target) => target.startsWith(tmp))).toEqual([]);
  });

  it("a workbook within the limits imports as before", async () => {
    const e = await setup();
    const { product, value } = openProduct(e.index);
    const file = await xlsxFile(join(e.dataDir, "fine.xlsx"), {
      Orders: [
        ["email", "product_code", "face_value", "reference"],
        ["a@example.com", product.code, value, "f1"],
        ["b@example.com", product.code, value, "f2"],
      ],
    });
    const run = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "fine", "--yes", "--json"],
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 2, valid: 2, enqueued: 2 });
  });
});
