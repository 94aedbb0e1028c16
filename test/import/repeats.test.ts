import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, describe, expect, it, vi } from "vitest";
import { archiveCampaign, restoreCampaign } from "../../src/campaigns/archive.js";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { REPEAT_OF_KEPT, repeatOf } from "../../src/campaigns/earlier-payments.js";
import { forgetCampaign } from "../../src/campaigns/forget.js";
import { type REPORT_COLUMNS, repeatOfText, reportRecords } from "../../src/campaigns/report.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { campaignSummary } from "../../src/campaigns/summary.js";
import { renderCampaignPage } from "../../src/dashboard/campaign-page.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import type { ImportOptions } from "../../src/import/import-flags.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { type CampaignEnv, campaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { createTestDatabase, dropTestDatabase, type TestDatabase } from "../helpers/database.js";
import { cleanPrefix, uniquePrefix } from "../helpers/redis.js";
import { xlsxFile } from "../helpers/xlsx.js";

let env: CampaignEnv | undefined;
let db: TestDatabase | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
  if (db) await dropTestDatabase(db);
  db = undefined;
});

/** `rows` rows with references, as the file's text and its cells (header first). */
async function sheet(label: string, rows = 5) {
  env = await campaignEnv({}, label);
  const { text } = validCsv(env.index, rows, "ref");
  const cells = text
    .trimEnd()
    .split("\n")
    .map((line) => line.split(","));
  return { e: env, text, cells, file: await csvFile(env, "rows.csv", text) };
}

async function refusal(promise: Promise<unknown>): Promise<ImportRefused> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportRefused);
  return error as ImportRefused;
}

function imported(
  e: CampaignEnv,
  options: Partial<ImportOptions> & { file: string; campaign: string },
  deps: ImportDeps = depsOf(e),
) {
  return importCampaign(options, deps);
}

describe("paid once across campaigns", () => {
  it("the same sheet under another name is refused, naming the earlier campaign and the file; nothing is recorded", async () => {
    const { e, file } = await sheet("same-sheet");
    await imported(e, { file, campaign: "gifts" });
    const error = await refusal(imported(e, { file, campaign: "gifts-final" }));
    const lines = error.message.split("\n");
    expect(lines[0]).toMatch(
      /^this file was imported as campaign gifts on \d{4}-\d\d-\d\d: 5 rows were paid before in campaign gifts \(lines 2-6 there; [\d.]+ [A-Z]{3}, queued, recorded \d{4}-\d\d-\d\d\): pass --allow-repeats to pay them again; nothing was recorded \(--skip-repeats records the other rows only\)$/,
    );
    expect(lines.at(-1)).toContain("nothing was recorded");
    expect(error.result.repeats).toMatchObject([
      { campaign: "gifts", rows: 5, lines: [2, 3, 4, 5, 6], outcome: "refused" },
    ]);
    expect(await e.ledger.campaigns.exists("gifts-final")).toBe(false);
    // A dry run says the same.
    const dry = await refusal(imported(e, { file, campaign: "gifts-final", dryRun: true }));
    expect(dry.message).toBe(error.message);
  });

  it("the same rows as .xlsx with other headers, in another order, are the same rows", async () => {
    const { e, file, cells } = await sheet("xlsx");
    await imported(e, { file, campaign: "q4" });
    // HR's export: other headers, other column order, upper-case e-mails, amounts as numbers.
    const [, ...body] = cells;
    const hr = await xlsxFile(join(e.dataDir, "hr.xlsx"), {
      People: [
        ["Amount", "Work Email", "Gift", "Ref"],
        ...body.map(([email, code, value, ref]) => [
          Number(value),
          email!.toUpperCase(),
          code,
          `hr-${ref}`,
        ]),
      ],
    });
    const map = ["Work Email=email", "Amount=face_value", "Gift=product_code", "Ref=reference"];
    const error = await refusal(imported(e, { file: hr, campaign: "q4-hr", map }));
    expect(error.result.repeats).toMatchObject([{ campaign: "q4", rows: 5 }]);
    expect(error.message).not.toContain("this file was imported");
  });

  it("--allow-repeats pays them and the campaign says so; --skip-repeats records the others only", async () => {
    const { e, file, text } = await sheet("allow-skip", 4);
    await imported(e, { file, campaign: "gifts" });
    const allowed = await imported(e, { file, campaign: "bonus", allowRepeats: true });
    expect(allowed).toMatchObject({
      enqueued: 4,
      repeats: [{ campaign: "gifts", rows: 4, outcome: "allowed" }],
    });
    expect((await campaignStatus(e.ledger, "bonus")).repeats).toEqual({ gifts: 4 });

    // Two more people beside the four: only they are recorded.
    const more = validCsv(e.index, 6, "ref").text.trimEnd().split("\n").slice(5);
    const wider = await csvFile(e, "wider.csv", `${text}${more.join("\n")}\n`);
    const skipped = await imported(e, { file: wider, campaign: "december", skipRepeats: true });
    expect(skipped).toMatchObject({ rows: 6, enqueued: 2 });
    expect(skipped.repeats).toHaveLength(2);
    expect(skipped.repeats!.map((g) => [g.campaign, g.rows, g.outcome])).toEqual([
      ["gifts", 4, "skipped"],
      ["bonus", 4, "skipped"],
    ]);
    expect((await e.ledger.campaigns.counts("december")).total).toBe(2);
  });

  it("rows whose earlier campaign ended with nothing made are no repeats", async () => {
    const { e, file } = await sheet("cancelled", 3);
    await imported(e, { file, campaign: "first", hold: true });
    await cancelCampaign(e.ledger, "first");
    const again = await imported(e, { file, campaign: "second" });
    expect(again).toMatchObject({ enqueued: 3 });
    expect(again.repeats).toBeUndefined();
  });

  it("after the first campaign's Redis is lost, a repeat is still refused", async () => {
    const { e, file } = await sheet("lost", 3);
    const prefix = uniquePrefix("lost-2");
    const ledger = new Ledger(e.redis, prefix);
    try {
      await importCampaign({ file, campaign: "gifts" }, { ...depsOf(e), ledger });
      await cleanPrefix(e.redis, prefix);
      const error = await refusal(
        importCampaign({ file, campaign: "gifts-2" }, { ...depsOf(e), ledger }),
      );
      expect(error.message).toContain("3 rows were paid before in campaign gifts (lines 2-4 there");
      expect(error.message).toContain("unknown");
    } finally {
      await cleanPrefix(e.redis, prefix);
    }
  });

  it("refused rows are listed in the error file with the earlier row", async () => {
    const { e, file } = await sheet("error-file", 2);
    await imported(e, { file, campaign: "gifts" });
    const errorFile = join(e.dataDir, "fix.csv");
    await refusal(imported(e, { file, campaign: "again", skipInvalid: true, errorFile }));
    const text = await readFile(errorFile, "utf8");
    expect(text).toContain(
      "paid before in campaign gifts (line 2 there, queued): pass --allow-repeats",
    );
    expect(text.trimEnd().split("\n")).toHaveLength(3);
  });

  it("the memory is kept in PostgreSQL when a database is configured", async () => {
    const { e, file } = await sheet("pg", 3);
    db = await createTestDatabase("repeats");
    const deps = { ...depsOf(e), stores: pgStores(e.dataDir, db.database) };
    await importCampaign({ file, campaign: "gifts" }, deps);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM paid_rows WHERE campaign = 'gifts'",
    );
    expect(rows[0].n).toBe(3);
    const error = await refusal(importCampaign({ file, campaign: "gifts-b" }, deps));
    expect(error.message).toMatch(
      /^this file was imported as campaign gifts on .*: 3 rows were paid before in campaign gifts/,
    );
    // The files under the data dir hold nothing of it.
    await expect(readFile(join(e.dataDir, "campaigns", "gifts", "paid.ndjson"))).rejects.toThrow();
  });
});

describe("what says a campaign pays rows again", () => {
  it("orders import exits 2 with a line per earlier campaign; status, list and the dashboard say repeats", async () => {
    const { e, file } = await sheet("cli", 2);
    await imported(e, { file, campaign: "gifts" });
    const refused = await giftjobs(e, ["orders", "import", file, "--campaign", "again", "--yes"]);
    expect(refused.code).toBe(2);
    const lines = refused.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^giftjobs: error: this file was imported as campaign gifts on .*: 2 rows were paid before in campaign gifts \(lines 2-3 there; /,
    );
    const paid = await giftjobs(e, [
      ...["orders", "import", file, "--campaign", "again", "--yes", "--allow-repeats"],
    ]);
    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain("paid again: this file was imported as campaign gifts");
    const status = await giftjobs(e, ["orders", "status", "--campaign", "again"]);
    expect(status.stdout).toContain("repeats: 2 of gifts (paid again knowingly: --allow-repeats)");
    const list = await giftjobs(e, ["orders", "list"]);
    expect(list.stdout).toContain("campaign again repeats: 2 of gifts");
    const page = renderCampaignPage({
      summary: await campaignSummary(e.ledger, "again"),
      failures: { rows: [], groups: [], total: 0, page: 1, pages: 1 },
      history: [],
      listed: [],
      actions: null,
      boardPath: "/queues",
      nonce: "n",
    });
    expect(page).toContain('<dt>repeats</dt><dd class="repeats">2 of gifts</dd>');
  });
});

describe("the report names the rows paid again", () => {
  type Line = Record<(typeof REPORT_COLUMNS)[number], string>;

  /** `orders report` of a campaign, to its default file: what it printed, and the file's lines. */
  async function report(e: CampaignEnv, campaign: string, json = false) {
    const run = await giftjobs(e, [
      ...["orders", "report", "--campaign", campaign],
      ...(json ? ["--json"] : []),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const path = join(e.dataDir, "campaigns", campaign, "report.csv");
    const text = await readFile(path, "utf8");
    return { stdout: run.stdout, path, lines: parse(text, { columns: true }) as Line[] };
  }

  /** Each line's `line` and `repeat_of`, and the e-mail it pays. */
  const marks = (lines: Line[]) => lines.map((l) => [l.line, l.email, l.repeat_of]);

  it("repeat_of marks exactly the repeated rows with the campaign and lines they repeat, through archive, restore and forget", async () => {
    const { e, file, cells } = await sheet("report-of", 3);
    await imported(e, { file, campaign: "gifts" });
    // The same three people after a new one: each is a line further down than in gifts.
    const [header, ...rows] = validCsv(e.index, 4, "ref").text.trimEnd().split("\n");
    const text = `${[header, rows[3], ...rows.slice(0, 3)].join("\n")}\n`;
    const bonusFile = await csvFile(e, "bonus.csv", text);
    const allowed = await imported(e, {
      file: bonusFile,
      campaign: "bonus",
      allowRepeats: true,
      hold: true,
    });
    expect(allowed).toMatchObject({ enqueued: 4, repeats: [{ campaign: "gifts", rows: 3 }] });

    const emails = cells.slice(1).map((c) => c[0]);
    const bonus = await report(e, "bonus");
    // Appended: the columns before keep their places.
    expect(Object.keys(bonus.lines[0]!).slice(13)).toEqual([
      "payout_status",
      "expires_at",
      "repeat_of",
    ]);
    const expected = [
      ["2", rows[3]!.split(",")[0], ""],
      ["3", emails[0], "gifts line 2"],
      ["4", emails[1], "gifts line 3"],
      ["5", emails[2], "gifts line 4"],
    ];
    expect(marks(bonus.lines)).toEqual(expected);
    const gifts = await report(e, "gifts");
    expect(gifts.lines.map((l) => l.repeat_of)).toEqual(["", "", ""]);

    // The command says the campaign's repeats, as orders status does; --json carries them.
    expect(bonus.stdout).toBe(
      `4 rows written to ${bonus.path}\n  repeats: 3 of gifts (paid again knowingly: --allow-repeats; the rows name them in column repeat_of)\n`,
    );
    expect(gifts.stdout).toBe(`3 rows written to ${gifts.path}\n`);
    const json = await report(e, "bonus", true);
    expect(JSON.parse(json.stdout)).toEqual({
      campaign: "bonus",
      rows: 4,
      report: json.path,
      repeats: { gifts: 3 },
    });
    expect(JSON.parse((await report(e, "gifts", true)).stdout)).not.toHaveProperty("repeats");

    // Archived: the archive's report has them, and the tombstone the repeats.
    await cancelCampaign(e.ledger, "bonus");
    await archiveCampaign(e.ledger, "bonus", { dataDir: e.dataDir });
    const archived = await report(e, "bonus", true);
    expect(marks(archived.lines)).toEqual(expected);
    expect(JSON.parse(archived.stdout).repeats).toEqual({ gifts: 3 });
    // Restored: the ledger's rows have them again.
    await restoreCampaign(e.ledger, "bonus");
    expect(marks((await report(e, "bonus")).lines)).toEqual(expected);

    // Forgotten: the people go, the campaigns and lines they repeat stay (no one's data).
    await forgetCampaign({ redis: e.redis, ledger: e.ledger, dataDir: e.dataDir }, "bonus", {
      dryRun: false,
    });
    const forgotten = (e: string | undefined) => (e ? "forgotten" : e);
    const afterForget = expected.map(([line, email, of]) => [line, forgotten(email), of]);
    const rewritten = parse(await readFile(bonus.path, "utf8"), { columns: true }) as Line[];
    expect(marks(rewritten)).toEqual(afterForget);
    expect(marks((await report(e, "bonus")).lines)).toEqual(afterForget);
  });
});

describe("the repeat_of cell", () => {
  /** An earlier row of `campaign` at `line`, recorded at `at`. */
  const earlier = (campaign: string, line: number, at: number) => ({
    campaign,
    line,
    at,
    fingerprint: "f",
    identity: `${campaign}-${line}`,
    currency: "USD",
    face: "2500",
    status: "completed",
  });

  it("lists a row's earlier rows oldest first, a campaign's lines together", () => {
    const of = repeatOf([
      earlier("q3", 4, 200),
      earlier("gifts", 13, 100),
      earlier("gifts", 12, 100),
    ]);
    expect(of).toEqual({
      rows: [
        { campaign: "gifts", line: 12 },
        { campaign: "gifts", line: 13 },
        { campaign: "q3", line: 4 },
      ],
    });
    expect(repeatOfText(of)).toBe("gifts lines 12, 13; q3 line 4");
    expect(repeatOfText({ rows: [{ campaign: "gifts", line: 12 }] })).toBe("gifts line 12");
    expect(repeatOfText(undefined)).toBe("");
  });

  it(`keeps the latest ${REPEAT_OF_KEPT} and counts the older ones`, () => {
    const daily = Array.from({ length: 9 }, (_, day) => earlier(`day-${day + 1}`, 2, day));
    const of = repeatOf(daily);
    expect(of.rows.map((r) => r.campaign)).toEqual(["day-5", "day-6", "day-7", "day-8", "day-9"]);
    expect(of.more).toBe(4);
    expect(repeatOfText(of)).toBe(
      "day-5 line 2; day-6 line 2; day-7 line 2; day-8 line 2; day-9 line 2; and 4 older rows",
    );
    expect(repeatOfText({ ...of, more: 1 })).toMatch(/; and 1 older row$/);
  });
});

describe("retry --new-key and the paid memory", () => {
  it("a failed_final row another campaign has paid since keeps its key unless --allow-repeats", async () => {
    const { e, file } = await sheet("retry", 1);
    await imported(e, { file, campaign: "first", hold: true });
    // Nothing was made for its row (a 4xx, as a worker records it).
    const moved = await e.ledger.orders.transition({
      campaign: "first",
      number: 1,
      from: ["queued"],
      to: "failed_final",
      patch: { error_type: "invalid_request" },
    });
    expect(moved.moved).toBe(true);
    // So the same person may be paid by another campaign...
    await expect(imported(e, { file, campaign: "second" })).resolves.toMatchObject({ enqueued: 1 });
    // ...and then a new key for the first would pay them twice.
    const options = { newKey: true, stores: fileStores(e.dataDir) };
    const kept = await retryCampaign(e.ledger, "first", options);
    expect(kept).toMatchObject({ orders: 0, rows: 0, repeats: 1 });
    const sent = await retryCampaign(e.ledger, "first", { ...options, allowRepeats: true });
    expect(sent).toMatchObject({ orders: 1, rows: 1, repeated: { second: 1 } });
    expect(sent.repeats).toBeUndefined();
    // Paid again knowingly: the campaign counts it and the row names the row it repeats, as an
    // import with --allow-repeats does; the report shows both.
    expect((await e.ledger.campaigns.meta("first")).repeats).toBe('{"second":1}');
    const [row] = await e.ledger.orders.getRows(
      "first",
      (await e.ledger.orders.getOrder("first", 2))!.identities,
    );
    expect(row?.repeat_of).toEqual({ rows: [{ campaign: "second", line: 2 }] });
    const report: string[][] = [];
    for await (const record of reportRecords(e.ledger, "first")) report.push(record);
    expect(report.map((r) => r.at(-1))).toEqual(["second line 2"]);
  });

  it("a row --allow-repeats marked gets back what it carried when the ledger refuses its move", async () => {
    const { e, file } = await sheet("retry-refused", 1);
    await imported(e, { file, campaign: "first", hold: true });
    await e.ledger.orders.transition({
      campaign: "first",
      number: 1,
      from: ["queued"],
      to: "failed_final",
      patch: { error_type: "invalid_request" },
    });
    await imported(e, { file, campaign: "second" });
    // The order changed meanwhile (another retry, a reconcile): REKEY refuses it.
    const rekey = vi
      .spyOn(e.ledger.orders, "rekey")
      .mockResolvedValue({ done: false, why: "not-allowed" });
    const result = await retryCampaign(e.ledger, "first", {
      newKey: true,
      stores: fileStores(e.dataDir),
      allowRepeats: true,
    });
    expect(rekey).toHaveBeenCalledOnce();
    expect(result).toMatchObject({ orders: 0, rows: 0 });
    expect(result.repeated).toBeUndefined();
    const [row] = await e.ledger.orders.getRows(
      "first",
      (await e.ledger.orders.getOrder("first", 1))!.identities,
    );
    expect(row?.repeat_of).toBeUndefined();
    expect((await e.ledger.campaigns.meta("first")).repeats).toBeUndefined();
  });
});

describe("campaign names", () => {
  it("--append to a campaign that does not exist is refused with did-you-mean", async () => {
    const { e, file } = await sheet("append-typo", 2);
    await imported(e, { file, campaign: "q4-gifts" });
    const error = await imported(e, { file, campaign: "q4-gfits", append: true }).catch((x) => x);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      'campaign q4-gfits does not exist (did you mean "q4-gifts"?): --append adds to an existing campaign; drop --append to start a new one',
    );
    expect(await e.ledger.campaigns.exists("q4-gfits")).toBe(false);
  });

  it("a new name that differs from another only in case, '-' or '_' is refused; 2026-01 and 2026-02 stay apart", async () => {
    const { e, file, text } = await sheet("alike", 2);
    await imported(e, { file, campaign: "q4" });
    for (const name of ["Q4", "q_4", "q-4"]) {
      const error = await imported(e, { file, campaign: name }).catch((x) => x);
      expect((error as Error).message).toContain(
        `campaign ${name} does not exist, and "q4" differs from it only in case`,
      );
    }
    const other = await csvFile(
      e,
      "other.csv",
      text.replaceAll("ref-", "other-").replaceAll("@", "+jan@"),
    );
    await imported(e, { file: other, campaign: "2026-01" });
    const feb = await csvFile(
      e,
      "feb.csv",
      text.replaceAll("ref-", "feb-").replaceAll("@", "+feb@"),
    );
    await expect(imported(e, { file: feb, campaign: "2026-02" })).resolves.toMatchObject({
      enqueued: 2,
    });
  });

  it("an archived campaign points to orders restore, and its archive tells its rows' statuses", async () => {
    const { e, file } = await sheet("archived", 1);
    await imported(e, { file, campaign: "old", hold: true });
    await cancelCampaign(e.ledger, "old");
    await archiveCampaign(e.ledger, "old", { dataDir: e.dataDir });
    const error = await imported(e, { file, campaign: "old", append: true }).catch((x) => x);
    expect((error as Error).message).toBe(
      "campaign old is archived: no rows can be added to it; `giftjobs orders restore --campaign old` brings it back, then import with --append",
    );
    // Its Redis rows are gone; the archive says they were cancelled: nothing was made, no repeat.
    await expect(imported(e, { file, campaign: "new" })).resolves.toMatchObject({ enqueued: 1 });
  });
});
