import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { startWorkers } from "../../src/worker/start-workers.js";
import type { RunningWorkers, StartWorkersOptions } from "../../src/worker/worker-options.js";
import { type CliRun, runCli } from "./cli.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "./redis.js";
import { removeDir, tmpDir } from "./tmp-dir.js";

/**
 * Everything an order test needs, real: a sandbox over HTTP, a synced catalog snapshot in a
 * temporary data dir, Redis under a prefix of its own. `dispose()` removes it all.
 */
export interface CampaignEnv {
  sandbox: Sandbox;
  config: Config;
  redis: Redis;
  ledger: Ledger;
  queue: Queue<OrderJobData>;
  client: ApiClient;
  index: CatalogIndex;
  dataDir: string;
  dispose(): Promise<void>;
}

export async function campaignEnv(
  sandboxOptions: SandboxOptions = {},
  label = "env",
): Promise<CampaignEnv> {
  const sandbox = await startSandbox({ products: 120, seed: 7, ...sandboxOptions });
  const dataDir = await tmpDir(label);
  const prefix = uniquePrefix(label);
  const config = loadConfig({
    env: {
      GIFTJOBS_API_URL: sandbox.url,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_REQUEST_TIMEOUT_MS: "5000",
      // The worker's own limiter stays out of the way: tests exercise the sandbox's limit.
      GIFTJOBS_ORDER_RATE_LIMIT: "60000",
    },
  });
  const client = new ApiClient({ baseUrl: sandbox.url, apiKey: config.apiKey, timeoutMs: 5000 });
  await syncCatalog({ client, dataDir });
  const index = (await loadCurrentIndex(dataDir))!;
  const redis = testRedis();
  const queue = new Queue<OrderJobData>(QUEUES.orders, { connection: redis, prefix });
  return {
    sandbox,
    config,
    redis,
    ledger: new Ledger(redis, prefix),
    queue,
    client,
    index,
    dataDir,
    dispose: async () => {
      await queue.close();
      await cleanPrefix(redis, prefix);
      await redis.quit();
      await sandbox.close();
      await removeDir(dataDir);
    },
  };
}

export const quietLog = silentLogger;

/** What importCampaign needs, from the env. */
export function depsOf(env: CampaignEnv): ImportDeps {
  return {
    ledger: env.ledger,
    catalog: env.index,
    client: env.client,
    log: quietLog,
    stores: fileStores(env.dataDir),
  };
}

/** The GIFTJOBS_* variables that point a `giftjobs` child process at the env. */
export function cliEnvOf(env: CampaignEnv): Record<string, string> {
  return {
    GIFTJOBS_API_URL: env.config.apiUrl,
    GIFTJOBS_API_KEY: env.config.apiKey!,
    GIFTJOBS_REDIS_URL: env.config.redisUrl,
    GIFTJOBS_PREFIX: env.config.prefix,
    GIFTJOBS_DATA_DIR: env.dataDir,
  };
}

/** Runs `giftjobs ARGS` against the env in a child process, logging warnings only. */
export function giftjobs(
  env: CampaignEnv,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<CliRun> {
  return runCli(args, { ...cliEnvOf(env), GIFTJOBS_LOG_LEVEL: "warn", ...extraEnv });
}

/** Numbers of the orders on the campaign's pending list (recorded, not yet handed to BullMQ), sorted. */
export async function pendingOrders(env: CampaignEnv, campaign: string): Promise<number[]> {
  const numbers = await env.redis.lrange(env.ledger.keys(campaign).pending, 0, -1);
  return numbers.map(Number).sort((a, b) => a - b);
}

/** Worker timings short enough for tests. */
export const FAST_TIMINGS = {
  firstPollDelayMs: 50,
  pollDelayMs: 50,
  rateLimitBaseMs: 200,
  dispatchTickMs: 50,
};

/**
 * In-process order workers on the env, with short timings. An override replaces its option whole
 * (`timings` is not merged into FAST_TIMINGS): a test states exactly the timings it runs with.
 */
export function runWorkers(
  env: CampaignEnv,
  overrides: Partial<StartWorkersOptions> = {},
): Promise<RunningWorkers> {
  return startWorkers({
    config: env.config,
    log: quietLog,
    queues: ["orders"],
    concurrency: 5,
    timings: FAST_TIMINGS,
    ...overrides,
  });
}

/** Every key under the test's prefix but BullMQ's queue meta (the test's Queue writes it). */
export async function redisKeys(env: CampaignEnv): Promise<string[]> {
  const keys = await env.redis.keys(`${env.config.prefix}:*`);
  return keys.filter((key) => key !== `${env.config.prefix}:orders:meta`);
}
