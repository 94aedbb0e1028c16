import { join, resolve } from "node:path";
import { Queue } from "bullmq";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { apiClientFor } from "../api/client-for-config.js";
import { currentActor } from "../audit/actor.js";
import { writeReport } from "../campaigns/report.js";
import { type CampaignStatus, pendingRows } from "../campaigns/status.js";
import { waitForCampaign } from "../campaigns/wait-for-campaign.js";
import { loadCurrentIndex } from "../catalog/current-snapshot.js";
import { sha256OfFile } from "../catalog/file-snapshot.js";
import { SNAPSHOT_FILES } from "../catalog/snapshot-layout.js";
import { syncCatalog } from "../catalog/sync-catalog.js";
import type { Config } from "../config.js";
import { RunError } from "../errors/run-error.js";
import { importPlannedDraft } from "../import/import-audit.js";
import { importCampaign } from "../import/import-campaign.js";
import type { ImportResult } from "../import/import-types.js";
import { writeSampleCsv } from "../import/sample-csv.js";
import { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import {
  commandClient,
  connectRedis,
  describeRedis,
  type RedisSettings,
} from "../redis/connection.js";
import { assertRedisAnswers } from "../redis/redis-down.js";
import { startSandbox } from "../sandbox/server.js";
import { openStores, type Stores } from "../stores/stores.js";
import { startWorkers } from "../worker/start-workers.js";
import { demoPrefix, demoPrefixAssignment } from "./demo-prefix.js";
import { type PrivateRedis, redisServerInstalled, startPrivateRedis } from "./private-redis.js";

const DEMO_CAMPAIGN = "demo";

/** The one line the demo says when GIFTJOBS_DATABASE_URL is set. */
const DATABASE_NOT_USED =
  "the demo does not use GIFTJOBS_DATABASE_URL: its catalog and journal stay under its own data dir, and no database is touched";

export interface DemoOptions {
  config: Config;
  log: Logger;
  /** Rows in the sample campaign. @defaultValue 200 */
  rows?: number;
  /**
   * When the user's wait began, in ms since the epoch: the CLI passes its process's start, so
   * `duration_ms` is the time the user waited (docs/commands.md, "The demo").
   * @defaultValue the call of runDemo
   */
  startedAt?: number;
  /** Draws progress (sync, orders). */
  onProgress?: (event: { phase: "sync" | "orders"; done: number; total: number }) => void;
}

export interface DemoResult {
  campaign: string;
  rows: number;
  new_rows: number;
  already_known: number;
  orders: number;
  totals: Record<string, { face_value: string; price: string }>;
  status: CampaignStatus;
  /** From `startedAt` until everything the demo started was stopped. */
  duration_ms: number;
  redis: string;
  snapshot: string;
  diff: string;
  csv: string;
  report: string;
  /**
   * The commands to try next, as typed in a shell: with the demo's prefix set, they show its
   * campaign (docs/commands.md, "The demo").
   */
  next: string[];
}

/**
 * The whole product on one machine: an in-process sandbox, a catalog sync, a sample CSV built
 * from the snapshot, an import, workers until the campaign is done, and a report. Everything
 * lives under `<dataDir>/demo` and the Redis prefix `<prefix>-demo`, so the demo never mixes
 * with real campaigns or sends a job a real worker could pick up, and never in a database; the commands it ends with
 * (`next`) set that prefix to show its campaign.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const started = options.startedAt ?? Date.now();
  const dataDir = resolve(options.config.dataDir, "demo");
  const redis = await demoRedis(options.config, dataDir, options.log);
  const sandbox = await startSandbox({
    products: 400,
    seed: 2024,
    orderRateLimit: 3000,
    asyncCompleteMs: 300,
  });
  let result: Awaited<ReturnType<typeof demoCampaign>>;
  try {
    const config: Config = {
      ...options.config,
      apiUrl: sandbox.url,
      apiKey: "demo-sandbox-key",
      apiVersion: undefined,
      ...redis.settings,
      prefix: demoPrefix(options.config.prefix),
      dataDir,
      orderRateLimitPerMinute: 3000,
      // Self-contained: the demo's catalog and journal stay under its data dir, whatever
      // GIFTJOBS_DATABASE_URL says, so it never writes into a real database (its workers
      // would journal there while its sync wrote files; docs/commands.md, "The demo").
      databaseUrl: undefined,
    };
    if (options.config.databaseUrl) options.log.warn(DATABASE_NOT_USED);
    result = await demoCampaign(config, options, redis.label);
  } finally {
    await sandbox.close();
    await redis.stop();
  }
  // Measured once the sandbox, the workers and any private Redis have stopped: the user waits
  // for those too.
  return {
    ...result,
    duration_ms: Math.round(Date.now() - started),
    next: nextCommands(options.config.prefix, redis.private),
  };
}

async function demoCampaign(
  config: Config,
  options: DemoOptions,
  redisLabel: string,
): Promise<Omit<DemoResult, "next" | "duration_ms">> {
  const client = apiClientFor(config);
  const synced = await syncCatalog({
    client,
    dataDir: config.dataDir,
    allowShrink: true,
    onProgress: (p) => options.onProgress?.({ phase: "sync", done: p.products, total: 400 }),
  });
  const index = (await loadCurrentIndex(config.dataDir))!;
  const csv = join(config.dataDir, "demo-orders.csv");
  await writeSampleCsv(csv, index, { rows: options.rows ?? 200, products: 4 });

  const connection = connectRedis(config);
  const queue = new Queue<OrderJobData>(QUEUES.orders, { connection, prefix: config.prefix });
  const ledger = new Ledger(commandClient(connection), config.prefix);
  // The demo's own data dir's files: its config names no database.
  const stores = await openStores(config);
  const workers = await startWorkers({
    config,
    log: options.log,
    queues: ["orders"],
    concurrency: 20,
  });
  try {
    // The demo's own campaign in its own Redis: a re-run with more rows adds them, as before
    // (--append only to a campaign that exists: docs/architecture/repeats.md, "Names").
    const append = await ledger.campaigns.exists(DEMO_CAMPAIGN);
    const imported = await importCampaign(
      {
        file: csv,
        campaign: DEMO_CAMPAIGN,
        itemsPerOrder: 1,
        append,
        // Its entry before its rows, as `orders import` writes it (docs/architecture/audit.md).
        beforeRecording: (planned) => demoImportEntry(stores, { file: csv, append }, planned),
      },
      { ledger, catalog: index, client, log: options.log, stores },
    );
    const status = await waitUntilDone(ledger, options);
    const report = join(config.dataDir, "report.csv");
    await writeReport(ledger, DEMO_CAMPAIGN, report);
    return {
      campaign: DEMO_CAMPAIGN,
      rows: imported.rows,
      new_rows: imported.enqueued,
      already_known: imported.already_known,
      orders: imported.orders,
      totals: Object.fromEntries(
        Object.entries(imported.totals).map(([c, t]) => [
          c,
          { face_value: t.face_value, price: t.price },
        ]),
      ),
      status,
      redis: redisLabel,
      snapshot: synced.dir,
      diff: join(synced.dir, SNAPSHOT_FILES.diff),
      csv,
      report,
    };
  } finally {
    await workers.close();
    await queue.close();
    await connection.quit();
    await stores.close();
  }
}

/** The demo import's audit entry, in the demo's own data dir's trail. */
async function demoImportEntry(
  stores: Stores,
  { file, append }: { file: string; append: boolean },
  planned: ImportResult,
): Promise<void> {
  const named = { file, campaign: DEMO_CAMPAIGN, append, budgets: [] };
  const fileSha256 = await sha256OfFile(file).catch(() => undefined);
  await stores.audit.append(
    importPlannedDraft({ named, actor: currentActor(), fileSha256 }, planned),
  );
}

async function waitUntilDone(ledger: Ledger, options: DemoOptions): Promise<CampaignStatus> {
  const { status, timedOut } = await waitForCampaign(ledger, DEMO_CAMPAIGN, {
    timeoutMs: 5 * 60_000,
    pollMs: 200,
    onStatus: (s) => {
      options.onProgress?.({ phase: "orders", done: s.total - pendingRows(s), total: s.total });
      if (s.paused) throw new RunError(`the demo campaign paused: ${s.paused.reason}`);
    },
  });
  if (timedOut) throw new RunError("the demo campaign did not finish within 5 minutes");
  return status;
}

/**
 * What to try after the demo. Its campaign lives under a prefix of its own (so no real worker
 * ever takes its jobs): the commands set it. A private redis-server is stopped by then, so
 * nothing can show its campaign: the commands are the first steps of a real run instead.
 */
function nextCommands(prefix: string, privateRedis: boolean): string[] {
  if (privateRedis) return ["npx giftjobs doctor", "npx giftjobs catalog sync"];
  const env = demoPrefixAssignment(prefix);
  return [`${env} npx giftjobs orders list`, `${env} npx giftjobs dashboard`];
}

/** The configured Redis when it answers; else a private redis-server; else one clear line. */
async function demoRedis(
  configured: RedisSettings,
  dataDir: string,
  log: Logger,
): Promise<{ settings: RedisSettings; label: string; private: boolean; stop(): Promise<void> }> {
  const probe = connectRedis(configured, { lazy: true });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await assertRedisAnswers(probe, configured, 2000);
    const { redisUrl, redisClusterNodes } = configured;
    const label = redisClusterNodes ? describeRedis(configured) : redisUrl;
    return {
      settings: { redisUrl, redisClusterNodes },
      label,
      private: false,
      stop: async () => {},
    };
  } catch {
    if (!redisServerInstalled()) {
      throw new RunError(
        `no Redis answers at ${describeRedis(configured)} and redis-server is not installed: install Redis 7 (e.g. apt-get install redis-server) or set GIFTJOBS_REDIS_URL`,
      );
    }
    log.info("no Redis at the configured URL; starting a private redis-server for the demo");
    const server: PrivateRedis = await startPrivateRedis(join(dataDir, "redis"));
    // A private server is one Redis, whatever the configuration said.
    const settings = { redisUrl: server.url, redisClusterNodes: undefined };
    return { settings, label: server.url, private: true, stop: () => server.stop() };
  } finally {
    probe.disconnect();
  }
}
