import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, describe, expect, it } from "vitest";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";

/**
 * docs/order-files.md, "Every problem of a row": invalid rows are counted as rows, and each row
 * reports all of its problems, on stderr and in the error file. Real sandbox, real Redis.
 */
let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/**
 * Two good rows, then line 4 with three problems (a bad e-mail, an unknown product code, a bad
 * amount) and line 5 with one (an unknown product code).
 */
async function fileWithBadRows(e: CampaignEnv): Promise<string> {
  const good = validCsv(e.index, 2).text;
  return csvFile(
    e,
    "bad-rows.csv",
    `${good}not-an-email,NOPE-XYZ,-5\nok@example.com,NOPE-ABC,10\n`,
  );
}

describe("orders import: invalid rows and their problems", () => {
  it("counts rows, not problems, and names every problem of a row", async () => {
    env = await campaignEnv({}, "row-problems");
    const file = await fileWithBadRows(env);
    const run = await giftjobs(env, ["orders", "import", file, "--campaign", "counts"]);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("line 4,"))).toEqual([
      expect.stringMatching(/^line 4, column email: "not-an-email" is not a valid e-mail address$/),
      expect.stringMatching(/^line 4, column face_value: face_value must be a plain decimal/),
      expect.stringMatching(/^line 4, column product_code: unknown product code NOPE-XYZ/),
    ]);
    expect(lines.filter((l) => l.startsWith("line 5,"))).toEqual([
      expect.stringMatching(/^line 5, column product_code: unknown product code NOPE-ABC/),
    ]);
    expect(lines.at(-1)).toBe("giftjobs: error: 2 invalid rows (4 problems); nothing was enqueued");
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await env.ledger.campaigns.exists("counts")).toBe(false);

    const dry = await giftjobs(env, ["orders", "import", file, "--campaign", "c", "--dry-run"]);
    expect(dry.code).toBe(2);
    expect(dry.stderr.trim().split("\n").at(-1)).toBe(
      "giftjobs: error: 2 invalid rows (4 problems); nothing was enqueued",
    );

    const json = await giftjobs(env, ["orders", "import", file, "--campaign", "c", "--json"]);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ rows: 4, valid: 2, invalid: 2, problems: 4 });
    expect(doc.errors.map((e: { line: number; column: string }) => [e.line, e.column])).toEqual([
      [4, "email"],
      [4, "face_value"],
      [4, "product_code"],
      [5, "product_code"],
    ]);
  });

  it("one bad row with one problem says 1 invalid row, with no problem count", async () => {
    env = await campaignEnv({}, "row-problems");
    const good = validCsv(env.index, 1).text;
    const file = await csvFile(env, "one.csv", `${good}not-an-email,NOPE-XYZ,10\n`);
    const both = await giftjobs(env, ["orders", "import", file, "--campaign", "one"]);
    expect(both.stderr.trim().split("\n").at(-1)).toBe(
      "giftjobs: error: 1 invalid row (2 problems); nothing was enqueued",
    );
    const code = good.split("\n")[1]!.split(",")[1]!;
    const single = await csvFile(env, "single.csv", `${good}not-an-email,${code},10\n`);
    const run = await giftjobs(env, ["orders", "import", single, "--campaign", "one"]);
    expect(run.stderr.trim().split("\n").at(-1)).toBe(
      "giftjobs: error: 1 invalid row; nothing was enqueued",
    );
  });

  it("the error file carries all of a row's problems in its error cell", async () => {
    env = await campaignEnv({}, "row-problems");
    const file = await fileWithBadRows(env);
    const errorFile = join(env.dataDir, "fix.csv");
    const run = await giftjobs(env, [
      "orders",
      "import",
      file,
      "--campaign",
      "skip",
      "--skip-invalid",
      "--error-file",
      errorFile,
      "--yes",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("rows 4: 2 valid, 2 invalid (4 problems)");
    const records = parse(await readFile(errorFile, "utf8"), { columns: true }) as Record<
      string,
      string
    >[];
    expect(records.map((r) => r.line)).toEqual(["4", "5"]);
    const problems = records[0]!.error!.split("; ").map((p) => p.split(":")[0]);
    expect(problems).toEqual(["email", "face_value", "product_code"]);
    expect(records[1]!.error).toMatch(/^product_code: unknown product code NOPE-ABC/);
    expect(await env.ledger.dispatch.pendingCount("skip")).toBe(2);
  });
});
