import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Job, Queue } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import {
  FORGET_JOB_NAME,
  FORGET_SCHEDULER_ID,
  type ForgetJobResult,
  MAINTENANCE_QUEUE,
} from "../../../jobs/maintenance/job.js";
import { importCampaign } from "../../../src/import/import-campaign.js";
import { ImportRefused } from "../../../src/import/import-errors.js";
import { createLogger } from "../../../src/log.js";
import { fileStores } from "../../../src/stores/file-stores.js";
import { pgStores } from "../../../src/stores/pg-stores.js";
import type { RunningWorkers } from "../../../src/worker/worker-options.js";
import { type CampaignEnv, campaignEnv, depsOf, runWorkers } from "../../helpers/campaign-env.js";
import { csvFile, validCsv } from "../../helpers/csv.js";
import { createTestDatabase, dropTestDatabase, type TestDatabase } from "../../helpers/database.js";
import { waitFor } from "../../helpers/wait-for.js";

const DAY_MS = 86_400_000;

let env: CampaignEnv | undefined;
let db: TestDatabase | undefined;
let workers: RunningWorkers | undefined;
afterEach(async () => {
  await workers?.close();
  workers = undefined;
  await env?.dispose();
  env = undefined;
  if (db) await dropTestDatabase(db);
  db = undefined;
});

/** A logger whose messages the test reads. */
function capture() {
  const messages: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      messages.push((JSON.parse(String(chunk)) as { msg: string }).msg);
      cb();
    },
  });
  return { messages, log: createLogger({ destination, pretty: false }) };
}

/** Makes what `campaign` recorded in the paid memory `days` days old. */
async function backdate(e: CampaignEnv, campaign: string, days: number): Promise<void> {
  if (db) {
    const ago = `${days} days`;
    await db.pool.query(
      "UPDATE paid_rows SET recorded_at = recorded_at - $2::interval WHERE campaign = $1",
      [campaign, ago],
    );
    await db.pool.query(
      "UPDATE imported_files SET imported_at = imported_at - $2::interval WHERE campaign = $1",
      [campaign, ago],
    );
    return;
  }
  for (const name of ["paid.ndjson", "imports.ndjson"]) {
    const path = join(e.dataDir, "campaigns", campaign, name);
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    const older = lines.map((line) => {
      const parsed = JSON.parse(line) as { t: number };
      return JSON.stringify({ ...parsed, t: parsed.t - days * DAY_MS });
    });
    await writeFile(path, `${older.join("\n")}\n`);
  }
}

/** Adds a job as the scheduler does, and waits for the worker to finish it. */
async function nightlyJob(e: CampaignEnv): Promise<ForgetJobResult> {
  const queue = new Queue(MAINTENANCE_QUEUE, { connection: e.redis, prefix: e.config.prefix });
  try {
    const { id } = await queue.add(FORGET_JOB_NAME, {});
    return await waitFor(
      async () => {
        const job = await Job.fromId<unknown, ForgetJobResult>(queue, id!);
        if (job?.failedReason) throw new Error(`the nightly job failed: ${job.failedReason}`);
        return job?.finishedOn ? job.returnvalue : undefined;
      },
      30_000,
      "the nightly job",
    );
  } finally {
    await queue.close();
  }
}

describe("the nightly job prunes the paid memory", () => {
  for (const store of ["files", "PostgreSQL"] as const)
    it(`of what was recorded before GIFTJOBS_REPEAT_WINDOW_DAYS ago, logs and audits it; a repeat within the window is still refused (${store})`, async () => {
      env = await campaignEnv({}, "prune-job");
      if (store === "PostgreSQL") db = await createTestDatabase("prune-job");
      const deps = {
        ...depsOf(env),
        ...(db ? { stores: pgStores(env.dataDir, db.database) } : {}),
      };
      const old = await csvFile(env, "old.csv", validCsv(env.index, 3, "old").text);
      const recent = await csvFile(env, "recent.csv", validCsv(env.index, 2, "recent").text);
      await importCampaign({ file: old, campaign: "old" }, deps);
      await importCampaign({ file: recent, campaign: "recent" }, deps);
      await backdate(env, "old", 100);

      // No GIFTJOBS_FORGET_AFTER_DAYS: the job is scheduled all the same, to prune.
      const logs = capture();
      const config = { ...env.config, ...db?.config, repeatWindowDays: 90 };
      expect(config.forgetAfterDays).toBeUndefined();
      workers = await runWorkers(env, { config, queues: ["maintenance"], log: logs.log });
      const queue = new Queue(MAINTENANCE_QUEUE, {
        connection: env.redis,
        prefix: env.config.prefix,
      });
      try {
        await waitFor(() => queue.getJobScheduler(FORGET_SCHEDULER_ID), 10_000, "the scheduler");
      } finally {
        await queue.close();
      }

      const night = await nightlyJob(env);
      expect(night).toMatchObject({ campaigns: [], paid_memory: { entries: 3, imports: 1 } });
      const line = logs.messages.find((m) => m.startsWith("paid memory: pruned"));
      expect(line).toMatch(
        /^paid memory: pruned 3 entries and 1 imported file recorded before \d{4}-.*Z \(GIFTJOBS_REPEAT_WINDOW_DAYS=90\)$/,
      );
      const trail = (db ? pgStores(env.dataDir, db.database) : fileStores(env.dataDir)).audit;
      const pruned = (await trail.list()).filter((e) => e.action === "prune");
      expect(pruned).toHaveLength(1);
      expect(pruned[0]).toMatchObject({
        campaign: null,
        result: "ok",
        details: { entries: 3, imports: 1, window_days: 90, by: "nightly job" },
      });
      expect(pruned[0]!.details.recorded_before).toBe(night.paid_memory.recorded_before);

      // What is within the window is kept: the recent sheet is still a repeat.
      const again = await importCampaign({ file: recent, campaign: "recent-2" }, deps).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(again).toBeInstanceOf(ImportRefused);
      expect((again as Error).message).toContain("2 rows were paid before in campaign recent");

      // The next night finds nothing more, and the trail records nothing more.
      expect((await nightlyJob(env)).paid_memory).toMatchObject({ entries: 0, imports: 0 });
      expect(logs.messages.at(-1)).toMatch(/^paid memory: pruned 0 entries and 0 imported files/);
      expect((await trail.list()).filter((e) => e.action === "prune")).toHaveLength(1);
      expect((await trail.verify()).ok).toBe(true);
      await trail.close();
    });
});
