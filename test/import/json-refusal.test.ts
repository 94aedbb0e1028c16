import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "json-refusal");
  return env;
}

/** `orders import --json` of a file refused whole: exit 2, one JSON document, one stderr line. */
async function refused(e: CampaignEnv, file: string, flags: string[] = []) {
  const run = await giftjobs(e, [
    "orders",
    "import",
    file,
    "--campaign",
    "whole",
    "--json",
    ...flags,
  ]);
  expect(run.code).toBe(2);
  const doc = JSON.parse(run.stdout);
  expect(doc).toMatchObject({ campaign: "whole", valid: 0, invalid: 0, enqueued: 0 });
  expect(run.stderr.trim().split("\n")).toHaveLength(1);
  return doc.errors as { line: number | null; column?: string; message: string }[];
}

describe("orders import --json when the whole file is refused", () => {
  it("an unknown header with --strict-columns names its line and column", async () => {
    const e = await setup();
    const file = await csvFile(e, "h.csv", "email,product_code,face_value,colour\n");
    const errors = await refused(e, file, ["--strict-columns"]);
    expect(errors).toEqual([
      expect.objectContaining({
        line: 1,
        column: "colour",
        message: expect.stringMatching(/unknown column/),
      }),
    ]);
  });

  it("a duplicate header and a missing required column", async () => {
    const e = await setup();
    const file = await csvFile(e, "d.csv", "email,email,face_value\n");
    const errors = await refused(e, file);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every((x) => x.line === 1)).toBe(true);
    expect(errors.map((x) => x.message).join(" ")).toMatch(/product_code/);
  });

  it("a quote that never closes names the line it starts on", async () => {
    const e = await setup();
    const good = validCsv(e.index, 3).text;
    const file = await csvFile(e, "q.csv", `${good}"open@example.com,X,1\n`);
    const errors = await refused(e, file);
    expect(errors).toEqual([
      expect.objectContaining({ line: 5, message: expect.stringMatching(/never closed/) }),
    ]);
  });

  it("a missing file: the reason, with no line", async () => {
    const e = await setup();
    const errors = await refused(e, join(e.dataDir, "nowhere.csv"));
    expect(errors).toEqual([
      { line: null, message: expect.stringMatching(/cannot read .*nowhere\.csv/) },
    ]);
  });
});

describe("a file refused half way", () => {
  it("leaves no half-written error file, and a header named like an object key is a header", async () => {
    const e = await setup();
    const good = validCsv(e.index, 2).text;
    // An invalid row (written to the error file), then a quote that never closes.
    const file = await csvFile(e, "half.csv", `${good}not-an-email,X,1\n"open@example.com,X,1\n`);
    const errorFile = join(e.dataDir, "fix", "errors.csv");
    const errors = await refused(e, file, ["--skip-invalid", "--error-file", errorFile]);
    expect(errors[0]!.message).toMatch(/never closed/);
    expect(await readdir(join(e.dataDir, "fix")).catch(() => [])).toEqual([]);

    const odd = await csvFile(e, "odd.csv", good.replace("face_value", "face_value,constructor"));
    const strict = await refused(e, odd, ["--strict-columns"]);
    expect(strict).toEqual([expect.objectContaining({ line: 1, column: "constructor" })]);
  });
});

describe("orders import --json refused after its rows were read", () => {
  /** An import of `file` into campaign "after" with --json: exit 2, the JSON, its one stderr line. */
  async function refusedAfter(e: CampaignEnv, file: string, flags: string[] = []) {
    const run = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "after", "--yes", "--json", ...flags],
    ]);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    return { doc: JSON.parse(run.stdout), line: lines[0]! };
  }

  it("says why in errors and on stderr: a campaign that exists without --append, a budget", async () => {
    const e = await setup();
    const first = await csvFile(e, "first.csv", validCsv(e.index, 2, "a").text);
    const imported = await giftjobs(e, ["orders", "import", first, "--campaign", "after", "--yes"]);
    expect(imported.code).toBe(0);
    const more = await csvFile(e, "more.csv", validCsv(e.index, 2, "b").text);

    const noAppend = await refusedAfter(e, more);
    const reason = expect.stringMatching(
      /^campaign after exists \(2 rows\); this file has 2 new rows: pass --append/,
    );
    expect(noAppend.doc).toMatchObject({ rows: 2, valid: 2, enqueued: 0 });
    expect(noAppend.doc.errors).toEqual([{ line: null, message: reason }]);
    expect(noAppend.line).toBe(`giftjobs: error: ${noAppend.doc.errors[0].message}`);

    // With --skip-invalid, the skipped rows' errors come first, then the reason it stopped.
    const mixed = await csvFile(
      e,
      "mixed.csv",
      `${validCsv(e.index, 2, "c").text}not-an-email,X,1\n`,
    );
    const skipped = await refusedAfter(e, mixed, ["--skip-invalid"]);
    expect(skipped.doc.errors).toEqual([
      expect.objectContaining({ line: 4 }),
      { line: null, message: reason },
    ]);

    const budget = await refusedAfter(e, more, ["--append", "--budget", "0.01"]);
    expect(budget.doc.errors).toEqual([
      { line: null, message: expect.stringMatching(/^--budget 0\.01.*nothing was enqueued$/) },
    ]);
    expect(budget.line).toBe(`giftjobs: error: ${budget.doc.errors[0].message}`);
    expect((await e.ledger.campaigns.counts("after")).total).toBe(2);
  });

  it("refused for its invalid rows, errors are those rows; stderr says how many", async () => {
    const e = await setup();
    const file = await csvFile(e, "bad.csv", `${validCsv(e.index, 1).text}not-an-email,X,1\n`);
    const { doc, line } = await refusedAfter(e, file);
    expect(doc.errors).toEqual([
      expect.objectContaining({ line: 3, column: "email" }),
      expect.objectContaining({ line: 3, column: "product_code" }),
    ]);
    expect(doc.invalid).toBe(1);
    expect(line).toBe("giftjobs: error: 1 invalid row (2 problems); nothing was enqueued");
  });
});
