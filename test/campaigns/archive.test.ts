import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  archiveCampaign,
  restoreCampaign,
  writeCampaignReport,
} from "../../src/campaigns/archive.js";
import { ARCHIVE_FILES, type ArchiveManifest } from "../../src/campaigns/archive-files.js";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { writeReport } from "../../src/campaigns/report.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { campaignSummary, listCampaigns } from "../../src/campaigns/summary.js";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import { redisKey } from "../../src/redis/redis-key.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { ledgerRow } from "../helpers/ledger-fixtures.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const QUICK_JOBS = { attempts: 3, backoff: { type: "fixed", delay: 50 } };

async function postControl(env: CampaignEnv, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${env.sandbox.url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  expect(res.ok).toBe(true);
}

async function sandboxOrderCount(env: CampaignEnv): Promise<number> {
  const res = await fetch(`${env.sandbox.url}/_sandbox/orders`);
  return ((await res.json()) as { orders: unknown[] }).orders.length;
}

/** Every key under the prefix that belongs to the campaign, without the prefix, sorted. */
async function campaignKeys(env: CampaignEnv, campaign: string): Promise<string[]> {
  const prefix = `${env.config.prefix}:campaign:${campaign}:`;
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await env.redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    found.push(...keys.map((k) => k.slice(prefix.length)));
  } while (cursor !== "0");
  return found.sort();
}

describe("orders archive and restore", () => {
  const envs = useCampaignEnv();
  let env: CampaignEnv;

  async function importFile(campaign: string, rows: number, options = {}) {
    const file = join(env.dataDir, `${campaign}.csv`);
    // Each campaign pays people of its own (a domain of its own): no row is a repeat of another's.
    const domain = `${campaign}.example.com`;
    await writeFile(
      file,
      sampleCsv(env.index, { rows, products: 2, referencePrefix: "r", domain }),
    );
    return importCampaign({ file, campaign, jobOptions: QUICK_JOBS, ...options }, depsOf(env));
  }

  async function work() {
    await envs.work(env, { concurrency: 4 });
  }

  /** A campaign of 12 rows run to its end: the rows of one of its two products fail (4xx). */
  async function doneCampaign(campaign: string) {
    const [unorderable] = pickSampleProducts(env.index, 2);
    await postControl(env, "/_sandbox/catalog", {
      mutate: { update: [{ code: unorderable!.code, is_orderable: false }] },
    });
    await importFile(campaign, 12);
    await work();
    await eventually(async () => {
      const s = await campaignStatus(env.ledger, campaign);
      return s.state === "done";
    }, "the campaign done");
    expect(await campaignStatus(env.ledger, campaign)).toMatchObject({
      total: 12,
      completed: 6,
      failed_final: 6,
    });
    return unorderable!.code;
  }

  /** A campaign imported held and cancelled at once: every row cancelled, nothing sent. */
  async function cancelledCampaign(campaign: string) {
    await importFile(campaign, 5, { hold: true });
    await cancelCampaign(env.ledger, campaign);
    expect(await campaignStatus(env.ledger, campaign)).toMatchObject({
      state: "cancelled",
      cancelled: 5,
    });
  }

  it("archives a done campaign to files, leaves a tombstone, and restores it as it was", async () => {
    env = await envs.setup("archive", { asyncCompleteMs: 50 });
    const unorderable = await doneCampaign("spring");
    const before = join(env.dataDir, "before.csv");
    await writeReport(env.ledger, "spring", before);
    const metaBefore = await env.ledger.campaigns.meta("spring");
    const countsBefore = await env.ledger.campaigns.counts("spring");
    const bytesBefore = (await campaignSummary(env.ledger, "spring")).redis_bytes;
    expect(await campaignKeys(env, "spring")).toEqual(
      expect.arrayContaining(["counts", "meta", "orders", "rows"]),
    );

    const archived = await archiveCampaign(env.ledger, "spring", { dataDir: env.dataDir });
    expect(archived).toMatchObject({
      outcome: "archived",
      state_before: "running",
      rows: 12,
      orders: 12,
    });
    const dir = join(env.dataDir, "campaigns", "spring", "archive");
    expect(archived.archive).toBe(dir);
    const manifest = JSON.parse(
      await readFile(join(dir, ARCHIVE_FILES.manifest), "utf8"),
    ) as ArchiveManifest;
    expect(manifest).toMatchObject({ campaign: "spring", rows: 12, orders: 12 });
    expect(Object.keys(manifest.files).sort()).toEqual([
      ARCHIVE_FILES.ledger,
      ARCHIVE_FILES.report,
    ]);

    // Only the tombstone is left; the campaign is still listed, as archived.
    expect(await campaignKeys(env, "spring")).toEqual(["counts", "meta"]);
    expect(await env.redis.sismember(redisKey(env.config.prefix, "running"), "spring")).toBe(0);
    expect(await env.ledger.campaigns.exists("spring")).toBe(true);
    expect(await env.ledger.follows.countOf("spring")).toBe(0);
    const tombstone = await env.ledger.campaigns.meta("spring");
    expect(tombstone).toMatchObject({
      state: "archived",
      archived_at: manifest.archived_at,
      archive_path: dir,
    });
    expect(await env.ledger.campaigns.counts("spring")).toEqual(countsBefore);
    expect(await campaignStatus(env.ledger, "spring")).toMatchObject({
      state: "archived",
      total: 12,
      completed: 6,
      failed_final: 6,
    });
    const listed = (await listCampaigns(env.ledger)).find((s) => s.campaign === "spring");
    expect(listed).toMatchObject({ state: "archived", archived_at: manifest.archived_at });
    const bytesAfter = listed!.redis_bytes;
    const ledgerBytes = manifest.files[ARCHIVE_FILES.ledger].bytes;
    console.log(
      `archive of 12 rows: Redis ${bytesBefore} bytes before, ${bytesAfter} after (tombstone); compact ledger ${ledgerBytes} bytes gzip`,
    );
    expect(bytesAfter).toBeLessThan(bytesBefore);

    // The report of an archived campaign is the one written at archive time: identical.
    const fromArchive = join(env.dataDir, "archived.csv");
    expect(await writeCampaignReport(env.ledger, "spring", fromArchive)).toBe(12);
    expect(await readFile(fromArchive, "utf8")).toBe(await readFile(before, "utf8"));

    // Nothing is imported into, or retried in, an archived campaign.
    await expect(importFile("spring", 12)).rejects.toThrow(/archived/);
    // RECORD itself refuses too (an import that passed its check just before the archive).
    await expect(env.ledger.orders.record("spring", [])).rejects.toThrow(/archived/);
    await expect(retryCampaign(env.ledger, "spring", { newKey: true })).rejects.toThrow(/archived/);
    expect(await campaignKeys(env, "spring")).toEqual(["counts", "meta"]);

    // Archive again: nothing to do, the files still match.
    expect(await archiveCampaign(env.ledger, "spring", { dataDir: env.dataDir })).toMatchObject({
      outcome: "already",
      archived_at: manifest.archived_at,
    });

    const restored = await restoreCampaign(env.ledger, "spring");
    expect(restored).toMatchObject({ state: "done", rows: 12, orders: 12 });
    expect(await env.ledger.campaigns.meta("spring")).toEqual(metaBefore);
    expect(await env.ledger.campaigns.counts("spring")).toEqual(countsBefore);
    // Restore puts a running campaign back in the running set, but the dispatcher's next pass
    // drops it again when it has nothing to send, so membership here is a race: the retry below
    // (which must reach the workers) is what shows the restored campaign runs.
    const after = join(env.dataDir, "after.csv");
    await writeReport(env.ledger, "spring", after);
    expect(await readFile(after, "utf8")).toBe(await readFile(before, "utf8"));

    // The failed rows can be retried: the product is orderable again, under the next key.
    const made = await sandboxOrderCount(env);
    expect(made).toBe(6);
    await postControl(env, "/_sandbox/catalog", {
      mutate: { update: [{ code: unorderable, is_orderable: true }] },
    });
    expect(
      await retryCampaign(env.ledger, "spring", { newKey: true, stores: fileStores(env.dataDir) }),
    ).toMatchObject({
      orders: 6,
      rows: 6,
    });
    await eventually(
      async () => (await campaignStatus(env.ledger, "spring")).completed === 12,
      "12 completed after the retry",
    );
    expect(await sandboxOrderCount(env)).toBe(12);
  });

  it("refuses to archive a campaign with rows to send, and to restore one not archived", async () => {
    env = await envs.setup("refuse");
    await importFile("busy", 4);
    await importFile("waiting", 2, { hold: true });
    for (const campaign of ["busy", "waiting"]) {
      const refused = await archiveCampaign(env.ledger, campaign, { dataDir: env.dataDir }).catch(
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(UserError);
      expect((refused as Error).message).toMatch(/only a done campaign/);
      expect((refused as Error).message).not.toContain("\n");
      expect(await campaignKeys(env, campaign)).toContain("rows");
      await expect(
        stat(join(env.dataDir, "campaigns", campaign, "archive", ARCHIVE_FILES.manifest)),
      ).rejects.toThrow(/ENOENT/);
    }
    expect(await campaignStatus(env.ledger, "busy")).toMatchObject({ state: "running", queued: 4 });
    await expect(restoreCampaign(env.ledger, "busy")).rejects.toThrow(
      /busy is running: only an archived campaign can be restored/,
    );
    await expect(restoreCampaign(env.ledger, "nothing")).rejects.toThrow(/no such campaign/);
  });

  it("refuses a restore or report from files whose sha256 differs from the manifest", async () => {
    env = await envs.setup("sha");
    await cancelledCampaign("gone");
    const before = join(env.dataDir, "before.csv");
    await writeReport(env.ledger, "gone", before);
    const archived = await archiveCampaign(env.ledger, "gone", { dataDir: env.dataDir });
    expect(archived).toMatchObject({ outcome: "archived", state_before: "cancelled", rows: 5 });

    const ledgerFile = join(archived.archive, ARCHIVE_FILES.ledger);
    const original = await readFile(ledgerFile);
    const changed = Buffer.from(original);
    changed[changed.length - 5]! ^= 0xff;
    await writeFile(ledgerFile, changed);
    const refused = await restoreCampaign(env.ledger, "gone").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DamagedFileError);
    expect((refused as Error).message).toMatch(/ledger\.ndjson\.gz: changed since it was archived/);
    expect(await campaignKeys(env, "gone")).toEqual(["counts", "meta"]);
    expect((await env.ledger.campaigns.meta("gone")).state).toBe("archived");
    await expect(
      archiveCampaign(env.ledger, "gone", { dataDir: env.dataDir }),
    ).rejects.toBeInstanceOf(DamagedFileError);

    const reportFile = join(archived.archive, ARCHIVE_FILES.report);
    await writeFile(reportFile, "line,reference\n");
    await expect(
      writeCampaignReport(env.ledger, "gone", join(env.dataDir, "r.csv")),
    ).rejects.toThrow(/report\.csv: changed since it was archived/);

    // With the files put back, the restore gives the cancelled campaign back.
    await writeFile(ledgerFile, original);
    await writeFile(reportFile, await readFile(before));
    expect(await restoreCampaign(env.ledger, "gone")).toMatchObject({
      state: "cancelled",
      rows: 5,
    });
    const after = join(env.dataDir, "after.csv");
    await writeReport(env.ledger, "gone", after);
    expect(await readFile(after, "utf8")).toBe(await readFile(before, "utf8"));
  });

  it("removes nothing when the campaign changed after its archive was written", async () => {
    env = await envs.setup("changed");
    await cancelledCampaign("late");
    const shape = await env.ledger.archive.shape("late");
    // Something happens after the archive read the campaign: here a row written by another
    // process (an import into a cancelled campaign is refused, so it is written directly).
    await env.redis.hset(env.ledger.keys("late").rows, "ref:late", JSON.stringify({ line: 99 }));
    const removed = await env.ledger.archive.removeCampaignData("late", shape, {
      archivedAt: new Date().toISOString(),
      archivePath: "/nowhere",
    });
    expect(removed).toMatchObject({ outcome: "changed" });
    expect(await campaignKeys(env, "late")).toEqual(
      expect.arrayContaining(["meta", "counts", "rows", "orders"]),
    );
    expect((await env.ledger.campaigns.meta("late")).state).toBe("cancelled");
  });

  it("a restore that stopped half way leaves the campaign archived; archive or restore again finishes", async () => {
    env = await envs.setup("halfway");
    await cancelledCampaign("half");
    const before = join(env.dataDir, "before.csv");
    await writeReport(env.ledger, "half", before);
    await archiveCampaign(env.ledger, "half", { dataDir: env.dataDir });
    // What a restore killed after its first batch leaves: some rows back, the tombstone archived.
    await env.ledger.archive.restoreEntries("half", {
      rows: [["ref:x", { ...ledgerRow(2), order: 1 }]],
      orders: [],
    });
    expect(await campaignStatus(env.ledger, "half")).toMatchObject({ state: "archived" });
    expect(await archiveCampaign(env.ledger, "half", { dataDir: env.dataDir })).toMatchObject({
      outcome: "already",
    });
    expect(await campaignKeys(env, "half")).toEqual(["counts", "meta"]);

    await env.ledger.archive.restoreEntries("half", {
      rows: [["ref:x", { ...ledgerRow(2), order: 1 }]],
      orders: [],
    });
    expect(await restoreCampaign(env.ledger, "half")).toMatchObject({ rows: 5 });
    const after = join(env.dataDir, "after.csv");
    await writeReport(env.ledger, "half", after);
    expect(await readFile(after, "utf8")).toBe(await readFile(before, "utf8"));
  });

  it("giftjobs orders archive, report, status, list and restore", async () => {
    env = await envs.setup("archive-cli");
    await cancelledCampaign("cli");
    await importFile("busy", 2);
    const before = join(env.dataDir, "before.csv");
    await writeReport(env.ledger, "cli", before);

    const busy = await giftjobs(env, ["orders", "archive", "--campaign", "busy"]);
    expect(busy.code).toBe(2);
    expect(busy.stderr.trim().split("\n")).toHaveLength(1);
    expect(busy.stderr).toMatch(/campaign busy is running/);

    const archived = await giftjobs(env, ["orders", "archive", "--campaign", "cli", "--json"]);
    expect(archived.code).toBe(0);
    expect(JSON.parse(archived.stdout)).toMatchObject({ outcome: "archived", rows: 5 });

    const status = await giftjobs(env, ["orders", "status", "--campaign", "cli", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: "archived", cancelled: 5 });
    const list = await giftjobs(env, ["orders", "list", "--json"]);
    expect(
      (JSON.parse(list.stdout) as { campaign: string; state: string }[]).map((s) => [
        s.campaign,
        s.state,
      ]),
    ).toEqual([
      ["cli", "archived"],
      ["busy", "running"],
    ]);

    const report = await giftjobs(env, ["orders", "report", "--campaign", "cli", "--json"]);
    expect(report.code).toBe(0);
    const written = JSON.parse(report.stdout) as { rows: number; report: string };
    expect(written).toMatchObject({
      rows: 5,
      report: join(env.dataDir, "campaigns", "cli", "report.csv"),
    });
    expect(await readFile(written.report, "utf8")).toBe(await readFile(before, "utf8"));

    const notArchived = await giftjobs(env, ["orders", "restore", "--campaign", "busy"]);
    expect(notArchived.code).toBe(2);
    expect(notArchived.stderr).toMatch(/only an archived campaign can be restored/);
    const restored = await giftjobs(env, ["orders", "restore", "--campaign", "cli", "--json"]);
    expect(restored.code).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ state: "cancelled", rows: 5 });
  });
});
