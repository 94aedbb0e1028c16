import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Queue } from "bullmq";
import { parse } from "csv-parse/sync";
import { afterEach, describe, expect, it } from "vitest";
import { FORGET_SCHEDULER_ID, MAINTENANCE_QUEUE } from "../../jobs/maintenance/job.js";
import { createForgetProcessor } from "../../jobs/maintenance/process.js";
import { syncNightlySchedule } from "../../jobs/maintenance/schedule.js";
import { archiveCampaign, restoreCampaign } from "../../src/campaigns/archive.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { loadConfig } from "../../src/config.js";
import { retentionCheck } from "../../src/doctor/retention-check.js";
import { ConfigError } from "../../src/errors/config-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { pickSampleProducts } from "../../src/import/sample-csv.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { createTestDatabase, dropTestDatabase, type TestDatabase } from "../helpers/database.js";
import { findPeople } from "../helpers/people-scan.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const QUICK_JOBS = { attempts: 3, backoff: { type: "fixed", delay: 50 } };
const NAME = "Zebulon Quarterhorse";

let db: TestDatabase | undefined;
afterEach(async () => {
  if (db) await dropTestDatabase(db);
  db = undefined;
});

/**
 * A sheet of `rows` people of `domain`, with references, a description and a metadata cell
 * naming a person, and one row of a product that does not exist (left out to the error file).
 */
function sheet(env: CampaignEnv, domain: string, rows: number, name = NAME) {
  const products = pickSampleProducts(env.index, 2);
  const lines = ["email,product_code,face_value,reference,description,metadata.name"];
  const emails: string[] = [];
  const references: string[] = [];
  for (let i = 0; i < rows; i++) {
    const p = products[i % 2]!;
    const d = p.denominations!;
    const face = d.type === "fixed" ? d.list[0]! : d.min;
    emails.push(`person-${i}@${domain}`);
    references.push(`emp-${domain}-${i}`);
    lines.push(`${emails[i]},${p.code},${face},${references[i]},For ${name},${name}`);
  }
  emails.push(`invalid-row@${domain}`);
  lines.push(`${emails.at(-1)},NO-SUCH-PRODUCT,10,emp-${domain}-bad,For ${name},${name}`);
  return { text: `${lines.join("\n")}\n`, emails, references, unorderable: products[1]!.code };
}

async function postControl(env: CampaignEnv, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${env.sandbox.url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  expect(res.ok).toBe(true);
}

/** The report's rows, and its face values summed in minor units per status. */
async function reportTotals(path: string) {
  const records = parse(await readFile(path), { columns: true }) as Record<string, string>[];
  const totals: Record<string, number> = {};
  for (const r of records)
    totals[r.status!] = (totals[r.status!] ?? 0) + Math.round(Number(r.face_value) * 100);
  return { rows: records.length, totals, records };
}

describe("orders forget", () => {
  const envs = useCampaignEnv();

  /** `campaign` imported from a sheet outside the data dir, its rows of one product failing. */
  async function endedCampaign(
    env: CampaignEnv,
    campaign: string,
    rows: number,
    deps = depsOf(env),
  ) {
    const people = sheet(env, `${campaign}.example.com`, rows);
    await postControl(env, "/_sandbox/catalog", {
      mutate: { update: [{ code: people.unorderable, is_orderable: false }] },
    });
    const file = join(await tmpDir("forget-in"), `${campaign}.csv`);
    await writeFile(file, people.text);
    const errorFile = join(env.dataDir, "campaigns", campaign, "invalid-rows-1.csv");
    await importCampaign(
      { file, campaign, jobOptions: QUICK_JOBS, skipInvalid: true, errorFile },
      deps,
    );
    await eventually(
      async () => (await campaignStatus(env.ledger, campaign)).state === "done",
      "the campaign done",
    );
    return { ...people, file };
  }

  it("removes every e-mail, reference and name from Redis, the data dir and PostgreSQL; the report keeps its money and rows; a repeat is still refused", async () => {
    const env = await envs.setup("forget", { asyncCompleteMs: 50 });
    db = await createTestDatabase("forget");
    const deps = { ...depsOf(env), stores: pgStores(env.dataDir, db.database) };
    await envs.work(env, { concurrency: 4, config: { ...env.config, ...db.config } });
    const people = await endedCampaign(env, "gifts", 8, deps);
    await envs.stopWorkers();
    const report = join(env.dataDir, "campaigns", "gifts", "report.csv");
    expect((await giftjobs(env, ["orders", "report", "--campaign", "gifts"], db.env)).code).toBe(0);
    const before = await reportTotals(report);
    expect(before.rows).toBe(8);
    expect(before.totals.failed_final).toBeGreaterThan(0);
    const needles = [...people.emails, ...people.references, NAME];
    const where = {
      redis: env.redis,
      prefix: env.config.prefix,
      dir: env.dataDir,
      pool: db.pool,
      schema: db.schema,
    };
    // The scan finds them before: in Redis, the report, the error file.
    const found = await findPeople(needles, where);
    expect(found.some((f) => f.startsWith("redis "))).toBe(true);
    expect(found.some((f) => f.includes("report.csv"))).toBe(true);
    expect(found.some((f) => f.includes("invalid-rows-1.csv"))).toBe(true);

    const dry = await giftjobs(
      env,
      ["orders", "forget", "--campaign", "gifts", "--dry-run"],
      db.env,
    );
    expect(dry.stdout).toContain("campaign gifts would be forgotten: 8 rows");
    expect(await findPeople(needles, where)).toEqual(found);

    // Without --yes and without a terminal to ask, nothing is removed (exit 2, one line).
    for (const args of [
      ["--campaign", "gifts"],
      ["--ended-before", new Date().toISOString()],
    ]) {
      const unasked = await giftjobs(env, ["orders", "forget", ...args], db.env);
      expect(unasked.code).toBe(2);
      expect(unasked.stderr).toMatch(/no terminal to ask: pass --yes to forget, or --dry-run/);
      expect(unasked.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    }
    expect(await findPeople(needles, where)).toEqual(found);

    const run = await giftjobs(
      env,
      ["orders", "forget", "--campaign", "gifts", "--json", "--yes"],
      db.env,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      dry_run: false,
      rows: 8,
      campaigns: [{ campaign: "gifts", outcome: "forgotten", rows: 8 }],
    });
    expect(summary.campaigns[0].files.removed).toEqual([
      join(env.dataDir, "campaigns", "gifts", "invalid-rows-1.csv"),
    ]);

    expect(await findPeople(needles, where)).toEqual([]);
    // The tables were read: the journal and the paid memory are there, kept.
    const journal = await db.pool.query(
      "SELECT count(*)::int AS n FROM order_journal WHERE campaign = 'gifts'",
    );
    expect(journal.rows[0].n).toBe(8);

    expect((await giftjobs(env, ["orders", "report", "--campaign", "gifts"], db.env)).code).toBe(0);
    const after = await reportTotals(report);
    expect(after.rows).toBe(before.rows);
    expect(after.totals).toEqual(before.totals);
    expect(new Set(after.records.map((r) => r.email))).toEqual(new Set(["forgotten"]));
    expect(after.records.map((r) => r.order_id)).toEqual(before.records.map((r) => r.order_id));

    const status = await giftjobs(env, ["orders", "status", "--campaign", "gifts"], db.env);
    expect(status.stdout).toMatch(
      /forgotten \d{4}-\d\d-\d\dT.*: e-mails, references and names removed/,
    );
    expect((await campaignStatus(env.ledger, "gifts")).forgotten_at).toMatch(/^\d{4}-/);

    // The same sheet again, under another name: a repeat still; under its own: refused.
    const again = await importCampaign(
      {
        file: people.file,
        campaign: "gifts-again",
        skipInvalid: true,
        errorFile: join(await tmpDir("e"), "e.csv"),
      },
      deps,
    ).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ImportRefused);
    expect((again as Error).message).toMatch(/rows were paid before in campaign gifts/);
    const same = await giftjobs(
      env,
      ["orders", "retry", "--campaign", "gifts", "--new-key"],
      db.env,
    );
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/^giftjobs: error: campaign gifts was forgotten \(orders forget\)/);

    const twice = await giftjobs(env, ["orders", "forget", "--campaign", "gifts", "--yes"], db.env);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(/^campaign gifts was forgotten already/);

    // Both forgets are in the audit trail (the dry run changed nothing: not recorded), with
    // counts and no person.
    const audit = await giftjobs(env, ["audit", "--campaign", "gifts", "--json"], db.env);
    expect(audit.code, audit.stderr).toBe(0);
    const forgets = (JSON.parse(audit.stdout) as { action: string }[]).filter(
      (e) => e.action === "forget",
    );
    expect(forgets).toHaveLength(2);
    expect(forgets[0]).toMatchObject({
      result: "ok",
      details: { campaigns: ["gifts"], left_alone: [] },
    });
    for (const email of people.emails) expect(audit.stdout).not.toContain(email);
  });

  it("refuses a campaign that is not ended, in one line", async () => {
    const env = await envs.setup("forget-held");
    const file = join(await tmpDir("forget-in"), "held.csv");
    await writeFile(
      file,
      sheet(env, "held.example.com", 3).text.split("\n").slice(0, 4).join("\n"),
    );
    await importCampaign({ file, campaign: "held", hold: true }, depsOf(env));
    const run = await giftjobs(env, ["orders", "forget", "--campaign", "held", "--yes"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "giftjobs: error: campaign held is not ended (3 rows are still queued, in flight or submitted): only an ended campaign can be forgotten\n",
    );
    const both = await giftjobs(env, [
      "orders",
      "forget",
      "--campaign",
      "held",
      "--ended-before",
      "2020-01-01",
    ]);
    expect(both.code).toBe(2);
    const typo = await giftjobs(env, ["orders", "forget", "--campaign", "helt", "--yes"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^giftjobs: error: no campaign named "helt"; did you mean "held"\?/,
    );
    const bad = await giftjobs(env, ["orders", "forget", "--ended-before", "yesterday"]);
    expect(bad.stderr).toMatch(/^giftjobs: error: --ended-before: "yesterday" is not a date/);
  });

  it("--ended-before forgets an archived campaign in its archive, leaves one not ended alone; restore and report still work", async () => {
    const env = await envs.setup("forget-archive", { asyncCompleteMs: 50 });
    await envs.work(env, { concurrency: 4 });
    const people = await endedCampaign(env, "spring", 6);
    await envs.stopWorkers();
    const file = join(await tmpDir("forget-in"), "held.csv");
    const held = sheet(env, "later.example.com", 2, "Other Person");
    await writeFile(file, held.text.split("\n").slice(0, 3).join("\n"));
    await importCampaign({ file, campaign: "later", hold: true }, depsOf(env));
    const reportBefore = join(await tmpDir("r"), "before.csv");
    expect(
      (await giftjobs(env, ["orders", "report", "--campaign", "spring", "--out", reportBefore]))
        .code,
    ).toBe(0);
    await archiveCampaign(env.ledger, "spring", { dataDir: env.dataDir });
    const needles = [...people.emails, ...people.references, NAME];
    const where = { redis: env.redis, prefix: env.config.prefix, dir: env.dataDir };
    expect((await findPeople(needles, where)).some((f) => f.includes("ledger.ndjson.gz"))).toBe(
      true,
    );

    const run = await giftjobs(env, [
      "orders",
      "forget",
      "--ended-before",
      new Date().toISOString(),
      "--yes",
    ]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^campaign spring forgotten: 6 rows/);
    expect(run.stdout).not.toContain("later");
    expect(await findPeople(needles, where)).toEqual([]);
    expect(await findPeople(held.emails.slice(0, 2), where)).not.toEqual([]);

    const reportAfter = join(await tmpDir("r"), "after.csv");
    expect(
      (await giftjobs(env, ["orders", "report", "--campaign", "spring", "--out", reportAfter]))
        .code,
    ).toBe(0);
    const [b, a] = [await reportTotals(reportBefore), await reportTotals(reportAfter)];
    expect(a.rows).toBe(b.rows);
    expect(a.totals).toEqual(b.totals);
    await restoreCampaign(env.ledger, "spring");
    expect((await campaignStatus(env.ledger, "spring")).forgotten_at).toMatch(/^\d{4}-/);
    expect(await findPeople(needles, where)).toEqual([]);
  });

  it("the nightly job forgets campaigns past GIFTJOBS_FORGET_AFTER_DAYS; doctor lists them before", async () => {
    const env = await envs.setup("forget-nightly", { asyncCompleteMs: 50 });
    await envs.work(env, { concurrency: 4 });
    const people = await endedCampaign(env, "old", 4);
    await envs.stopWorkers();
    const settings = { ...env.config, forgetAfterDays: 30 };
    // Ended 40 days ago.
    await env.redis.hset(
      env.ledger.keys("old").meta,
      "finished_at",
      new Date(Date.now() - 40 * 86_400_000).toISOString(),
    );
    const due = await retentionCheck(settings);
    expect(due).toMatchObject({ name: "retention", ok: false });
    expect(due!.detail).toMatch(
      /^1 campaigns ended more than 30 days ago still hold people's data: old;/,
    );
    expect(await retentionCheck({ ...settings, forgetAfterDays: undefined })).toBeUndefined();

    const job = { id: "1", queueName: MAINTENANCE_QUEUE } as never;
    const deps = {
      redis: env.redis,
      ledger: env.ledger,
      dataDir: env.dataDir,
      repeatWindowDays: 90,
    };
    const off = await createForgetProcessor({ ...deps, afterDays: undefined })(job);
    expect(off.campaigns).toEqual([]);
    const notYet = await createForgetProcessor({ ...deps, afterDays: 50 })(job);
    expect(notYet.campaigns).toEqual([]);
    const result = await createForgetProcessor({ ...deps, afterDays: 30 })(job);
    expect(result).toMatchObject({ campaigns: ["old"], rows: 4, skipped: [] });
    expect(
      await findPeople(people.emails, {
        redis: env.redis,
        prefix: env.config.prefix,
        dir: env.dataDir,
      }),
    ).toEqual([]);
    expect(await retentionCheck(settings)).toMatchObject({ ok: true });

    const schedule = { connection: env.redis, prefix: env.config.prefix };
    const queue = new Queue(MAINTENANCE_QUEUE, schedule);
    try {
      // Registered whatever the setting: the same job prunes the paid memory every night.
      expect(await syncNightlySchedule(schedule)).toBeInstanceOf(Date);
      expect(await queue.getJobScheduler(FORGET_SCHEDULER_ID)).toMatchObject({
        pattern: "30 3 * * *",
      });
    } finally {
      await queue.close();
    }
  });

  it("doctor's retention line names a command that forgets them, run as printed", async () => {
    const env = await envs.setup("forget-hint", { asyncCompleteMs: 50 });
    await envs.work(env, { concurrency: 4 });
    const old = await endedCampaign(env, "old-hint", 3);
    const recent = await endedCampaign(env, "recent-hint", 2);
    await envs.stopWorkers();
    await env.redis.hset(
      env.ledger.keys("old-hint").meta,
      "finished_at",
      new Date(Date.now() - 40 * 86_400_000).toISOString(),
    );
    const days = { GIFTJOBS_FORGET_AFTER_DAYS: "30" };
    const doctor = await giftjobs(env, ["doctor"], days);
    const line = doctor.stdout.split("\n").find((l) => l.includes("retention"));
    expect(line).toMatch(
      /1 campaigns ended more than 30 days ago still hold people's data: old-hint;/,
    );
    const command = /`(giftjobs [^`]+)`/.exec(line!)?.[1];
    expect(command).toMatch(/^giftjobs orders forget --ended-before \S+ --yes$/);
    // As printed: split at its spaces, no shell, no terminal to answer a question.
    const [, ...args] = command!.split(" ");
    const run = await giftjobs(env, args, days);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("old-hint");
    expect(run.stdout).not.toContain("recent-hint");
    const where = { redis: env.redis, prefix: env.config.prefix, dir: env.dataDir };
    expect(await findPeople(old.emails, where)).toEqual([]);
    expect((await findPeople(recent.emails, where)).length).toBeGreaterThan(0);
    const after = await giftjobs(env, ["doctor"], days);
    expect(after.stdout).toMatch(
      /no campaign that ended more than 30 days ago holds people's data/,
    );
  });

  it("GIFTJOBS_FORGET_AFTER_DAYS is a whole number of days, unset by default", () => {
    expect(loadConfig({ env: {} }).forgetAfterDays).toBeUndefined();
    expect(loadConfig({ env: { GIFTJOBS_FORGET_AFTER_DAYS: "30" } }).forgetAfterDays).toBe(30);
    expect(() => loadConfig({ env: { GIFTJOBS_FORGET_AFTER_DAYS: "2.5" } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { GIFTJOBS_FORGET_AFTER_DAYS: "0" } })).toThrow(
      /GIFTJOBS_FORGET_AFTER_DAYS.*must be at least 1/,
    );
  });
});
