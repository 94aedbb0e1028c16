import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { type Config, loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { Ledger } from "../../src/orders/ledger.js";
import type { OrderJobData } from "../../src/orders/order-job.js";
import { QUEUES } from "../../src/queue/names.js";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "./redis.js";
import { waitFor } from "./wait-for.js";

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
  const dataDir = await mkdtemp(join(tmpdir(), `giftjobs-${label}-`));
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
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const quietLog = silentLogger;

/** Polls until `check` is true, or fails after `timeoutMs` with `what`. */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), timeoutMs, what);
}
