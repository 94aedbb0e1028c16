import { spawn } from "node:child_process";
import { truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CampaignEnv, campaignEnv, cliEnvOf, giftjobs } from "../helpers/campaign-env.js";
import { type CliRun, cliCommandLine } from "../helpers/cli.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { cell, num, odsFile, row, table } from "../helpers/ods.js";
import { openProduct } from "../helpers/xlsx.js";

/**
 * docs/order-files.md, "Files that are refused": a file refused by its first bytes ends the
 * command there, however much more it holds; a pipe that carries a sheet is read. The real CLI
 * in a child process, a real sandbox and Redis.
 */
let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** Generous, and bounded: a command still reading its input is killed and the test fails. */
const ENOUGH_MS = 30_000;

/** Runs a command line to its end, or kills it (by its own pid) after ENOUGH_MS. */
function bounded(
  command: string,
  args: string[],
  extraEnv: Record<string, string>,
): Promise<CliRun & { killed: boolean }> {
  const child = spawn(command, args, {
    env: { ...process.env, ...extraEnv, CI: "true", GIFTJOBS_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, ENOUGH_MS);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

function importOf(e: CampaignEnv, file: string, campaign: string) {
  const [node, ...entry] = cliCommandLine();
  return bounded(
    node!,
    [...entry, "orders", "import", file, "--campaign", campaign, "--yes"],
    cliEnvOf(e),
  );
}

/** `giftjobs orders import <(cat FILE)` through bash: the import reads a pipe (/dev/fd/N). */
function importThroughPipe(e: CampaignEnv, file: string, campaign: string) {
  const [node, ...entry] = cliCommandLine();
  const script = `"$0" "$@" <(cat "$ORDERS_FILE") --campaign ${campaign} --yes`;
  return bounded("bash", ["-c", script, node!, ...entry, "orders", "import"], {
    ...cliEnvOf(e),
    ORDERS_FILE: file,
  });
}

describe("an input that can never be a sheet", () => {
  it.each([["/dev/zero"], ["/dev/urandom"], ["a 10 GB sparse file of zeros"]])(
    "%s is refused in one line and the command ends (exit 2), reading no further",
    async (what) => {
      env = await campaignEnv({}, "endless");
      let file = what;
      if (what.startsWith("a 10 GB")) {
        file = join(env.dataDir, "zeros.csv");
        await writeFile(file, "");
        await truncate(file, 10 * 2 ** 30);
      }
      const run = await importOf(env, file, "endless");
      expect(run.killed, "still running after 30 s").toBe(false);
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split("\n")).toEqual([
        `giftjobs: error: ${file} is not a text, .xlsx or .ods file: it holds binary data`,
      ]);
      expect(await env.ledger.campaigns.exists("endless")).toBe(false);
    },
  );
});

describe("a pipe that carries a sheet", () => {
  it("imports a CSV and an .ods through process substitution", async () => {
    env = await campaignEnv({}, "pipe");
    const { text } = validCsv(env.index, 3);
    const csv = await csvFile(env, "orders.csv", text);
    const fromCsv = await importThroughPipe(env, csv, "piped-csv");
    expect(fromCsv.stderr).toBe("");
    expect(fromCsv.code).toBe(0);
    expect(await env.ledger.campaigns.exists("piped-csv")).toBe(true);

    const { product, value } = openProduct(env.index);
    const ods = await odsFile(join(env.dataDir, "orders.ods"), [
      table("Orders", [
        row(["email", "product_code", "face_value"]),
        row([cell("ann@example.com"), cell(product.code), num(value)]),
        row([cell("bob@example.com"), cell(product.code), num(value)]),
      ]),
    ]);
    const fromOds = await importThroughPipe(env, ods, "piped-ods");
    expect(fromOds.code, fromOds.stderr).toBe(0);
    const rows: number[] = [];
    for await (const [, r] of env.ledger.orders.rows("piped-ods")) rows.push(r.line);
    expect(rows.sort()).toEqual([2, 3]);
  });

  it("imports an .ods file named as it is, like an .xlsx", async () => {
    env = await campaignEnv({}, "ods");
    const { product, value } = openProduct(env.index);
    const ods = await odsFile(join(env.dataDir, "orders.ods"), [
      table("Orders", [
        row([cell("Gift cards", 'table:number-columns-spanned="3"')]),
        row(["Email Address", "SKU", "Amount"]),
        row([cell("ann@example.com  "), cell(product.code), num(value)]),
      ]),
    ]);
    const run = await giftjobs(env, [
      "orders",
      "import",
      ods,
      "--campaign",
      "ods",
      "--yes",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 1, valid: 1, enqueued: 1 });
  });
});
