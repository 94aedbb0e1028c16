import { readdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxOptions } from "../../src/sandbox/index.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { recordedBodies } from "../helpers/ledger-fixtures.js";
import { tmpDir } from "../helpers/tmp-dir.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(options: SandboxOptions = {}): Promise<CampaignEnv> {
  env = await campaignEnv(options, "cli-import");
  return env;
}

/**
 * Every key under the test's prefix: what the command left in Redis. BullMQ's queue meta key
 * is left out: the test's own Queue object writes it when it connects, before any import.
 */
async function redisKeys(e: CampaignEnv): Promise<string[]> {
  const keys = await e.redis.keys(`${e.config.prefix}:*`);
  return keys.filter((key) => key !== `${e.config.prefix}:orders:meta`);
}

/** A file of `valid` good rows followed by a bad e-mail and a bad face value. */
function withTwoBadRows(e: CampaignEnv, valid: number): string {
  const good = validCsv(e.index, valid).text;
  const code = good.split("\n")[1]!.split(",")[1]!;
  return `${good}not-an-email,${code},10\n ok@example.com,${code},-5\n`;
}

describe("giftjobs orders import", () => {
  it("--json prints exactly one JSON document with the documented keys", async () => {
    const e = await setup();
    const { text, currency } = validCsv(e.index, 12);
    const file = await csvFile(e, "orders.csv", text);
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "json",
      "--yes",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(Object.keys(doc)).toEqual([
      "campaign",
      "rows",
      "valid",
      "invalid",
      "enqueued",
      "already_known",
      "orders",
      "totals",
      "priced_by",
      "errors",
      "state",
    ]);
    expect(doc).toMatchObject({
      campaign: "json",
      rows: 12,
      valid: 12,
      invalid: 0,
      enqueued: 12,
      already_known: 0,
      orders: 12,
      priced_by: "service",
      errors: [],
      state: "running",
    });
    expect(Object.keys(doc.totals)).toEqual([currency]);
    expect(Object.keys(doc.totals[currency])).toEqual(["face_value", "price"]);
    expect(doc.totals[currency].face_value).toMatch(/^\d+(\.\d+)?$/);
    expect(await e.ledger.dispatch.pendingCount("json")).toBe(12);
  });

  it("strict mode: exit 2, errors with line and column on stderr, nothing queued or recorded", async () => {
    const e = await setup();
    const file = await csvFile(e, "bad.csv", withTwoBadRows(e, 3));
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "strict"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^line 5, column email: /);
    expect(lines[1]).toMatch(/^line 6, column face_value: /);
    expect(lines.at(-1)).toBe("giftjobs: error: 2 invalid rows; nothing was enqueued");
    expect(await e.ledger.dispatch.pendingCount("strict")).toBe(0);
    expect(await e.ledger.campaigns.exists("strict")).toBe(false);
    expect(await redisKeys(e)).toEqual([]);

    const json = await giftjobs(e, ["orders", "import", file, "--campaign", "strict", "--json"]);
    expect(json.code).toBe(2);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ rows: 5, valid: 3, invalid: 2, enqueued: 0, orders: 0 });
    expect(doc.errors).toEqual([
      { line: 5, column: "email", message: expect.any(String) },
      { line: 6, column: "face_value", message: expect.any(String) },
    ]);
  });

  it("--skip-invalid writes the error file and enqueues the valid rows", async () => {
    const e = await setup();
    const file = await csvFile(e, "bad.csv", withTwoBadRows(e, 3));
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "skip",
      "--yes",
      "--skip-invalid",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ rows: 5, valid: 3, invalid: 2, enqueued: 3, orders: 3 });
    expect(doc.error_file).toMatch(/campaigns\/skip\/invalid-rows-.*\.csv$/);
    const errors = (await readFile(doc.error_file, "utf8")).trim().split("\n");
    expect(errors[0]).toBe("email,product_code,face_value,error,line");
    expect(errors[1]).toMatch(/^not-an-email,[^,]+,10\.00,"email: .*",5$/);
    // -5 would be a formula in a spreadsheet: escaped, and read back as -5 (fix-list-cell.ts).
    expect(errors[2]).toMatch(/^ ok@example\.com,[^,]+,'-5,"?face_value: .*"?,6$/);
    expect(errors).toHaveLength(3);
    expect(await e.ledger.dispatch.pendingCount("skip")).toBe(3);
    // Only the error file, the order journal and its tags marker, and the paid memory's files
    // are in the campaign folder: no temporary file.
    expect((await readdir(join(e.dataDir, "campaigns", "skip"))).sort()).toEqual(
      [
        basename(doc.error_file),
        "imports.ndjson",
        "order-tags",
        "orders.ndjson",
        "paid.ndjson",
      ].sort(),
    );
  });

  it("--dry-run writes nothing to Redis", async () => {
    const e = await setup();
    const file = await csvFile(e, "orders.csv", validCsv(e.index, 8).text);
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "dry",
      "--dry-run",
      "--json",
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 8, valid: 8, enqueued: 0, orders: 0 });
    expect(await redisKeys(e)).toEqual([]);

    const text = await giftjobs(e, ["orders", "import", file, "--campaign", "dry", "--dry-run"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("dry run: nothing recorded or enqueued");
    expect(await redisKeys(e)).toEqual([]);
    // Nor to the data dir: no campaign folder, no order journal.
    expect(await readdir(e.dataDir)).not.toContain("campaigns");
  });

  it("--budget below the campaign's price: exit 2, nothing enqueued", async () => {
    const e = await setup();
    const { text, currency } = validCsv(e.index, 10);
    const file = await csvFile(e, "orders.csv", text);
    const over = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "budget",
      "--budget",
      `1:${currency}`,
    ]);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(
      new RegExp(
        `^giftjobs: error: --budget 1:${currency}: the campaign costs \\d+\\.\\d+ ${currency}; nothing was enqueued\n$`,
      ),
    );
    expect(await e.ledger.dispatch.pendingCount("budget")).toBe(0);
    expect(await e.ledger.campaigns.exists("budget")).toBe(false);

    const within = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "budget",
      "--yes",
      "--budget",
      "100000000",
    ]);
    expect(within.code).toBe(0);
    expect(await e.ledger.dispatch.pendingCount("budget")).toBe(10);
  });

  it("refuses a campaign over the sandbox balance; --no-balance-check skips the check", async () => {
    const probe = await setup();
    const { text, currency } = validCsv(probe.index, 6);
    await probe.dispose();
    const e = await setup({ balances: { [currency]: "1.00" } });
    const file = await csvFile(e, "orders.csv", text);
    const refused = await giftjobs(e, ["orders", "import", file, "--campaign", "bal"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`but the balance is 1.00 ${currency}`);
    expect(await e.ledger.dispatch.pendingCount("bal")).toBe(0);

    const skipped = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "bal",
      "--yes",
      "--no-balance-check",
      "--json",
    ]);
    expect(skipped.code).toBe(0);
    expect(JSON.parse(skipped.stdout)).toMatchObject({ enqueued: 6 });
  });

  it("the balance check stops after 3 tries when nothing listens at the URL", async () => {
    const e = await setup();
    const file = await csvFile(e, "orders.csv", validCsv(e.index, 2).text);
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "down"], {
      GIFTJOBS_API_URL: url,
      GIFTJOBS_LOG_LEVEL: "error",
    });
    expect(run.code).toBe(1);
    // The tries are counted in test/catalog/retry-policy.test.ts (3, not a 5xx's five).
    const line = run.stderr.trim();
    expect(line).toMatch(/^giftjobs: failed: cannot reach the service at /);
    expect(line).toContain(`${url} (connection refused`);
    expect(line).toContain("after 3 tries");
    expect(line).toContain("GIFTJOBS_API_URL");
    expect(line).toMatch(/Nothing was enqueued\.$/);
    expect(await e.ledger.campaigns.exists("down")).toBe(false);
  });

  it("the balance check stops on a wrong API key, naming the setting, never the key", async () => {
    const e = await setup({ apiKey: "test-key-123456" });
    const file = await csvFile(e, "orders.csv", validCsv(e.index, 2).text);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "key"], {
      GIFTJOBS_API_KEY: "sk-wrong-secret-42",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain("sk-wrong-secret-42");
    expect(run.stderr.trim()).toBe(
      "giftjobs: failed: the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY. Nothing was enqueued.",
    );
    expect(await e.ledger.campaigns.exists("key")).toBe(false);
  });

  it("a refused API key stops a dry run too: exit 1, one line, whatever the prices path", async () => {
    // The issue's case: a dry run with a key the service refuses used to pass, estimating the
    // prices locally, with a stack trace in an info line; the real import then failed.
    const e = await setup({ apiKey: "test-key-123456" });
    const { text, currency } = validCsv(e.index, 2);
    const file = await csvFile(e, "orders.csv", text);
    const templates = await csvFile(
      e,
      "templates.csv",
      `email,selection_template_id,currency,face_value\nt@example.com,PT-GJ,${currency},10\n`,
    );
    const wrong = { GIFTJOBS_API_KEY: "sk-wrong-secret-42", GIFTJOBS_LOG_LEVEL: "info" };
    const refusedLine = (said: string) =>
      `giftjobs: failed: ${said}: check GIFTJOBS_API_KEY. Nothing was enqueued.\n`;
    const invalid = refusedLine("the API key is not valid (invalid_api_key, HTTP 401)");
    const runs: [string[], string][] = [
      // Priced by the service's estimate: the estimate meets the refusal.
      [[file, "--dry-run"], invalid],
      [[file, "--yes", "--no-balance-check"], invalid],
      // Template rows: the service is not asked for prices, but is asked whether it takes the key.
      [[templates, "--dry-run"], invalid],
      [[templates, "--yes", "--no-balance-check"], invalid],
    ];
    for (const [args, stderr] of runs) {
      const run = await giftjobs(e, ["orders", "import", ...args, "--campaign", "key"], wrong);
      expect({ args, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        args,
        code: 1,
        stdout: "",
        stderr,
      });
    }
    // A key kept without the right to order: 403 forbidden, told as the service said it.
    e.sandbox.setApiKey("rotated-key-0987654321", { oldKey: "forbidden" });
    const forbidden = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "key", "--dry-run"],
      {
        GIFTJOBS_LOG_LEVEL: "info",
      },
    );
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toBe(
      refusedLine(
        "the service refused the API key (forbidden, HTTP 403: This API key is not allowed to do this)",
      ),
    );
    expect(forbidden.stderr).not.toContain("test-key-123456");
    expect(await redisKeys(e)).toEqual([]);

    // With a key it takes and the estimate failing, the dry run passes at the snapshot's prices;
    // its info line says why in a few fields, with no stack trace.
    e.sandbox.setFaults({ estimateFailRate: 1 });
    const fallback = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "key", "--dry-run"],
      {
        GIFTJOBS_API_KEY: "rotated-key-0987654321",
        GIFTJOBS_LOG_LEVEL: "info",
      },
    );
    expect(fallback.code).toBe(0);
    expect(fallback.stdout).toContain("prices: estimated locally from the catalog snapshot");
    const info = fallback.stderr.split("\n").find((line) => line.includes("prices estimated"));
    expect(JSON.parse(info!)).toMatchObject({
      level: 30,
      error: { name: "ServerError", status: 500, type: "internal_server_error" },
    });
    expect(fallback.stderr).not.toMatch(/\bat |stack/);
  });

  it("without a snapshot: one line, exit 2; --no-catalog-check --currency USD imports", async () => {
    const e = await setup();
    const empty = await tmpDir("nosnap");
    try {
      const file = await csvFile(
        e,
        "orders.csv",
        "email,product_code,face_value\na@example.com,ANY-1,10\nb@example.com,ANY-2,12.50\n",
      );
      const args = ["orders", "import", file, "--campaign", "nocat"];
      const refused = await giftjobs(e, args, { GIFTJOBS_DATA_DIR: empty });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `giftjobs: error: no catalog snapshot in ${join(empty, "catalog")}: run \`giftjobs catalog sync\` first, or pass --no-catalog-check\n`,
      );
      // --no-catalog-check without a currency, or with one that is not a code: one line each.
      const env = { GIFTJOBS_DATA_DIR: empty };
      const bare = await giftjobs(e, [...args, "--yes", "--no-catalog-check"], env);
      expect([bare.code, bare.stderr]).toEqual([
        2,
        "giftjobs: error: --no-catalog-check needs --currency CUR: the currency every row pays in\n",
      ]);
      const euro = await giftjobs(e, [...args, "--no-catalog-check", "--currency", "EURO"], env);
      expect([euro.code, euro.stderr]).toEqual([
        2,
        "giftjobs: error: --currency must be a 3-letter currency code such as USD (got EURO)\n",
      ]);
      const done = await giftjobs(
        e,
        [
          ...args,
          "--yes",
          "--no-catalog-check",
          "--currency",
          "USD",
          "--no-balance-check",
          "--json",
        ],
        { GIFTJOBS_DATA_DIR: empty },
      );
      expect(done.code).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({
        enqueued: 2,
        totals: { USD: { face_value: "22.50", price: "22.50" } },
      });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("--map renames a header and --delimiter ';' reads a ';' file", async () => {
    const e = await setup();
    const lines = validCsv(e.index, 4).text.trimEnd().split("\n").slice(1);
    const text = `Email Address;product_code;face_value\n${lines.map((l) => l.replaceAll(",", ";")).join("\n")}\n`;
    const file = await csvFile(e, "semicolon.csv", text);
    const plain = await giftjobs(e, ["orders", "import", file, "--campaign", "map"]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("use --delimiter ';'");
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "map",
      "--yes",
      "--map",
      "Email Address=email",
      "--delimiter",
      ";",
      "--json",
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 4, valid: 4, enqueued: 4 });
  });

  it("a ';' file with decimal commas: read as such, said once; the same rows with dots are the same rows", async () => {
    const e = await setup();
    const { text } = validCsv(e.index, 4);
    const [header, ...lines] = text.trimEnd().split("\n");
    const comma = lines.map((l) => {
      const cells = l.split(",");
      cells[2] = cells[2]!.includes(".") ? cells[2]!.replace(".", ",") : `${cells[2]},00`;
      return cells.join(";");
    });
    const file = await csvFile(
      e,
      "comma.csv",
      `${header!.replaceAll(",", ";")}\n${comma.join("\n")}\n`,
    );
    const args = ["orders", "import", file, "--campaign", "comma", "--delimiter", ";"];
    const refused = await giftjobs(e, [...args, "--no-decimal-comma"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("pass --decimal-comma to read it as");

    const run = await giftjobs(e, [...args, "--yes", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 4, valid: 4, enqueued: 4 });
    const said = run.stderr.split("\n").filter((l) => l.includes("read as the decimal mark"));
    expect(said).toHaveLength(1);
    // Recorded as the service takes them: the dot file of the same rows adds nothing.
    const dots = await csvFile(e, "dots.csv", text);
    const again = await giftjobs(e, ["orders", "import", dots, "--campaign", "comma", "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ enqueued: 0, already_known: 4 });
  });

  it("imports headers as people write them; ignored columns are named once and never sent", async () => {
    const e = await setup();
    const lines = validCsv(e.index, 3).text.trimEnd().split("\n").slice(1);
    const text = `First Name,Email Address,Product Code,Amount,Department\n${lines
      .map((l, i) => `Jane${i},${l},Secret-Dept-${i}`)
      .join("\n")}\n`;
    const file = await csvFile(e, "people.csv", text);
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "people",
      "--yes",
      "--json",
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: 3, valid: 3, enqueued: 3, errors: [] });
    expect(run.stderr.split("\n").filter((l) => l.startsWith("columns: "))).toEqual([
      'columns: "Email Address" -> email, "Product Code" -> product_code, "Amount" -> face_value',
    ]);
    const ignored = run.stderr.split("\n").filter((l) => l.startsWith("ignored columns: "));
    expect(ignored).toHaveLength(1);
    expect(ignored[0]).toMatch(/^ignored columns: "First Name", "Department" /);
    const requests = [...(await recordedBodies(e.ledger, "people")).values()];
    expect(requests).toHaveLength(3);
    for (const body of requests.map((r) => JSON.stringify(r))) {
      expect(body).toMatch(/@example\.com/);
      expect(body).not.toMatch(/Jane|Secret-Dept|First Name|Department/);
    }

    const strict = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "people-strict",
      "--strict-columns",
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/column First Name: unknown column "First Name"/);
    expect(strict.stderr).toMatch(/column Department: unknown column "Department"/);
    expect(await e.ledger.campaigns.exists("people-strict")).toBe(false);
  });

  it("re-importing a shuffled copy prints 0 new, N already known", async () => {
    const e = await setup();
    const { text } = validCsv(e.index, 9);
    const first = await csvFile(e, "a.csv", text);
    const [header, ...rows] = text.trimEnd().split("\n");
    const second = await csvFile(e, "b.csv", `${[header, ...rows.reverse()].join("\n")}\n`);
    expect(
      (await giftjobs(e, ["orders", "import", first, "--campaign", "again", "--yes"])).code,
    ).toBe(0);
    // 0 new rows: nothing to spend, so no --yes needed (the re-run case).
    const run = await giftjobs(e, ["orders", "import", second, "--campaign", "again"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("0 new, 9 already known; 0 orders enqueued");
  });

  it("a changed row under a known reference: exit 2", async () => {
    const e = await setup();
    const { text } = validCsv(e.index, 3, "ref");
    const file = await csvFile(e, "a.csv", text);
    expect((await giftjobs(e, ["orders", "import", file, "--campaign", "chg", "--yes"])).code).toBe(
      0,
    );
    const changed = await csvFile(e, "b.csv", text.replace("recipient-000002@", "someone@"));
    const run = await giftjobs(e, ["orders", "import", changed, "--campaign", "chg"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^line 3, column reference: row changed since line 3/);
  });

  it("--items-per-order 200 with --execution-mode sync: exit 2", async () => {
    const e = await setup();
    const file = await csvFile(e, "orders.csv", validCsv(e.index, 2).text);
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "sync",
      "--items-per-order",
      "200",
      "--execution-mode",
      "sync",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "giftjobs: error: --items-per-order 200 needs --execution-mode async: a sync order holds exactly one item\n",
    );
    expect(await redisKeys(e)).toEqual([]);
  });
});
