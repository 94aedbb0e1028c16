import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { REPORT_COLUMNS, writeReport } from "../../src/campaigns/report.js";
import { templateExample } from "../../src/import/order-template.js";
import {
  EXAMPLE_EMAIL,
  isReportHeader,
  REPORT_ONLY_COLUMNS,
} from "../../src/import/validation/risky-files.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";

/**
 * docs/order-files.md, "Files that are refused": the template's example row, a giftjobs report
 * and a header with no rows are refused in one line (exit 2) unless a flag says they are meant.
 * Real sandbox, real Redis, the real CLI.
 */
let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** The one line on stderr, and that it is not a stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("the template's example row", () => {
  it("is what the risky-file check looks for", () => {
    expect(templateExample(undefined)[0]).toBe(EXAMPLE_EMAIL);
  });

  it("refuses a file holding it, naming the line, in import, dry run and --skip-invalid", async () => {
    env = await campaignEnv({}, "risky-example");
    const template = join(env.dataDir, "template.csv");
    const written = await giftjobs(env, ["orders", "template", "--out", template]);
    expect(written.code).toBe(0);
    // A real row above it: the example is on line 3.
    const [header, example] = (await readFile(template, "utf8")).trimEnd().split("\n");
    const code = example!.split(",")[1]!;
    const face = example!.split(",")[2]!;
    const file = await csvFile(
      env,
      "filled.csv",
      `${header}\nann@example.org,${code},${face},ref-1,Hi\n${example}\n`,
    );
    for (const extra of [[], ["--dry-run"], ["--skip-invalid", "--yes"]]) {
      const run = await giftjobs(env, ["orders", "import", file, "--campaign", "ex", ...extra]);
      expect(run.code, extra.join(" ")).toBe(2);
      expect(oneLine(run.stderr)).toBe(
        `giftjobs: error: ${file}: line 3, column email: this is the example row of \`giftjobs orders template\` (recipient@example.com): delete the row, or pass --allow-example to import it; nothing was enqueued`,
      );
    }
    expect(await env.ledger.campaigns.exists("ex")).toBe(false);
  });

  it("--json carries the refusal's line; --allow-example imports the template as it is", async () => {
    env = await campaignEnv({}, "risky-example");
    const template = join(env.dataDir, "template.csv");
    expect((await giftjobs(env, ["orders", "template", "--out", template])).code).toBe(0);
    const json = await giftjobs(env, ["orders", "import", template, "--campaign", "ex", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).errors).toEqual([
      expect.objectContaining({ line: 2, column: "email" }),
    ]);

    const allowed = await giftjobs(env, [
      "orders",
      "import",
      template,
      "--campaign",
      "ex",
      "--allow-example",
      "--dry-run",
    ]);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain("rows 1: 1 valid, 0 invalid");
  });
});

describe("a header with no data rows", () => {
  it("is refused with exit 2 and one line, in import and dry run", async () => {
    env = await campaignEnv({}, "risky-empty");
    const file = await csvFile(env, "empty.csv", "email,product_code,face_value\n");
    for (const extra of [["--yes"], ["--dry-run"]]) {
      const run = await giftjobs(env, ["orders", "import", file, "--campaign", "none", ...extra]);
      expect(run.code).toBe(2);
      expect(oneLine(run.stderr)).toBe(
        `giftjobs: error: ${file}: line 1: the header is followed by no data rows: nothing to import (was the file saved before its rows were pasted?)`,
      );
    }
    expect(await env.ledger.campaigns.exists("none")).toBe(false);
  });
});

describe("a giftjobs report", () => {
  it("is known by its header", () => {
    expect(isReportHeader([...REPORT_COLUMNS])).toBe(true);
    expect(
      REPORT_ONLY_COLUMNS.every((c) => (REPORT_COLUMNS as readonly string[]).includes(c)),
    ).toBe(true);
    expect(isReportHeader(["email", "product_code", "face_value", "status"])).toBe(false);
  });

  it("is refused pointing at orders retry; --from-report imports its cancelled and failed rows only", async () => {
    env = await campaignEnv({}, "risky-report");
    const { text } = validCsv(env.index, 4, "rep");
    const orders = await csvFile(env, "orders.csv", text);
    const held = await giftjobs(env, ["orders", "import", orders, "--campaign", "first", "--hold"]);
    expect(held.code).toBe(0);
    await cancelCampaign(env.ledger, "first");
    const report = join(env.dataDir, "report.csv");
    expect(await writeReport(env.ledger, "first", report)).toBe(4);

    const refused = await giftjobs(env, ["orders", "import", report, "--campaign", "again"]);
    expect(refused.code).toBe(2);
    const line = refused.stderr.trim().split("\n").at(-1)!;
    expect(line).toMatch(/^giftjobs: error: .*report\.csv: line 1: this is a giftjobs report/);
    expect(line).toContain("`giftjobs orders retry --campaign NAME`");
    expect(line).toContain("--from-report");
    expect(await env.ledger.campaigns.exists("again")).toBe(false);

    // One row marked completed, as if it had been paid: it must not be sent again.
    const lines = (await readFile(report, "utf8")).trimEnd().split("\n");
    lines[1] = lines[1]!.replace(",cancelled,", ",completed,");
    await writeFile(report, `${lines.join("\n")}\n`);
    const run = await giftjobs(env, [
      "orders",
      "import",
      report,
      "--campaign",
      "again",
      "--from-report",
      "--hold",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("rows 3: 3 valid, 0 invalid");
    expect(run.stdout).toContain(
      "report rows left out (completed 1): only failed_final and cancelled rows are sent again",
    );
    expect((await env.ledger.campaigns.counts("again")).total).toBe(3);
  });

  it("with --from-report and nothing to send again: exit 2 saying so", async () => {
    env = await campaignEnv({}, "risky-report");
    const header = REPORT_COLUMNS.join(",");
    const { text } = validCsv(env.index, 1);
    const [email, code, face] = text.trimEnd().split("\n")[1]!.split(",");
    const row = `2,,${email},${code},${face},USD,completed,o-1,i-1,k-1,,,,,`;
    const file = await csvFile(env, "done.csv", `${header}\n${row}\n`);
    const run = await giftjobs(env, [
      "orders",
      "import",
      file,
      "--campaign",
      "done",
      "--from-report",
      "--dry-run",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n").at(-1)).toBe(
      `giftjobs: error: ${file}: line 1: no row of this report is to be sent again (completed 1): --from-report imports only failed_final and cancelled rows`,
    );
  });
});
