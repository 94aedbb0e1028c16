import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CatalogSyncJobData } from "../../jobs/catalog/job.js";
import { createCatalogSyncProcessor } from "../../jobs/catalog/process.js";
import { QUEUES } from "../../jobs/registry.js";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { fileCatalogStore } from "../../src/catalog/file-store.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { acquireSyncLock } from "../../src/catalog/sync-lock.js";
import { RunError } from "../../src/errors/run-error.js";
import { connectRedis } from "../../src/redis/connection.js";
import {
  type CatalogFixture,
  catalogFixture,
  cursorOfPage,
  FAST_RETRY,
  leftoverTmpDirs,
} from "../helpers/catalog-fixture.js";
import { REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { control } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually } from "../helpers/wait-for.js";

let fx: CatalogFixture;
let prefix: string;
let redis: Redis;
let queue: Queue<CatalogSyncJobData>;
let child: ChildProcess | undefined;

beforeEach(async () => {
  fx = await catalogFixture({ products: 2600 });
  prefix = uniquePrefix("catsync");
  redis = testRedis();
  queue = new Queue(QUEUES.catalog, { connection: redis, prefix });
});

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await queue.close();
  redis.disconnect();
  await fx.close();
});

/** The sha256 of products.json from an uninterrupted sync of the same catalog. */
async function referenceSha(): Promise<string> {
  const dir = await tmpDir("catalog-ref");
  try {
    return (await syncCatalog({ client: fx.client, dataDir: dir })).manifest.sha256;
  } finally {
    fx.requestedCursors.length = 0;
  }
}

async function addJob(): Promise<Job<CatalogSyncJobData>> {
  return queue.add("catalog-sync", {}, { attempts: 3 });
}

async function reload(job: Job<CatalogSyncJobData>): Promise<Job<CatalogSyncJobData>> {
  return (await Job.fromId<CatalogSyncJobData>(queue, job.id!))!;
}

const isFinished = (state: string) => state === "completed" || state === "failed";

/** A BullMQ worker of the catalog queue running the processor; close() also closes Redis. */
function catalogWorker(options: { lockWaitMs: number; maxLockWaits?: number }) {
  const connection = connectRedis(REDIS_URL, { forWorker: true });
  const worker = new Worker(
    QUEUES.catalog,
    createCatalogSyncProcessor({
      client: fx.client,
      store: fileCatalogStore(fx.dataDir),
      ...options,
    }),
    { connection, prefix },
  );
  return {
    close: async () => {
      await worker.close();
      connection.disconnect();
    },
  };
}

const processor = () =>
  createCatalogSyncProcessor({
    client: fx.client,
    store: fileCatalogStore(fx.dataDir),
    retry: FAST_RETRY,
  });

describe("a catalog-sync job", () => {
  it("resumes after a failed attempt from its checkpoint, not from the start", async () => {
    const want = await referenceSha();
    const job = await addJob();
    await control(fx.sandbox, "/_sandbox/faults", {
      product_page_fault: { after: cursorOfPage(fx.sandbox, 4), kind: "500" },
    });
    await expect(processor()(job)).rejects.toThrow(RunError);
    const saved = (await reload(job)).data.checkpoint!;
    expect(saved).toMatchObject({ pages: 3, products: 1500, after: cursorOfPage(fx.sandbox, 4) });
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([saved.tmp]);
    expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();

    await control(fx.sandbox, "/_sandbox/faults", { product_page_fault: null });
    fx.requestedCursors.length = 0;
    const result = await processor()(await reload(job));
    expect(result).toMatchObject({ products: 2600, pages: 6, resumedAfterPage: 3, added: 2600 });
    // Only page 4 onwards (and the empty page after the last) were fetched again.
    expect(fx.requestedCursors).toEqual([
      cursorOfPage(fx.sandbox, 4),
      cursorOfPage(fx.sandbox, 5),
      cursorOfPage(fx.sandbox, 6),
      fx.sandbox.state.catalog.products.at(-1)!.code,
    ]);
    const snapshot = await openCurrentSnapshot(fx.dataDir);
    expect(snapshot!.manifest.sha256).toBe(want);
    expect(snapshot!.manifest.resumed_after_page).toBe(3);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });

  it("cleans its temporary directory when its last attempt fails", async () => {
    const job = await queue.add("catalog-sync", {}, { attempts: 1 });
    await control(fx.sandbox, "/_sandbox/faults", {
      product_page_fault: { after: cursorOfPage(fx.sandbox, 2), kind: "500" },
    });
    await expect(processor()(job)).rejects.toThrow(RunError);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });

  it("refuses a shrink without retrying", async () => {
    await processor()(await addJob());
    await control(fx.sandbox, "/_sandbox/catalog", {
      catalog: fx.sandbox.state.catalog.products.slice(0, 100),
    });
    const error = await processor()(await addJob()).catch((e: unknown) => e);
    expect((error as Error).name).toBe("UnrecoverableError");
    expect((error as Error).message).toMatch(/fewer than the current 2600/);
  });

  it("waits while another sync holds the lock, without using an attempt, then runs", async () => {
    const lock = await acquireSyncLock(fx.dataDir); // a manual `catalog sync`, say
    const worker = catalogWorker({ lockWaitMs: 200 });
    try {
      const job = await queue.add("catalog-sync", {}, { attempts: 1 });
      await eventually(async () => ((await reload(job)).data.lockWaits ?? 0) >= 2, "two waits");
      // Two waits on one attempt: a failure would have ended it (attempts: 1).
      expect(await job.getState()).not.toBe("failed");
      expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();

      await lock.release();
      await eventually(async () => isFinished(await job.getState()), "the job to end", 10_000);
      expect(await job.getState()).toBe("completed");
      expect((await reload(job)).returnvalue).toMatchObject({ products: 2600, added: 2600 });
    } finally {
      await worker.close();
      await lock.release();
    }
  });

  it("gives up after its last wait for another sync's lock", async () => {
    const lock = await acquireSyncLock(fx.dataDir);
    const worker = catalogWorker({ lockWaitMs: 50, maxLockWaits: 2 });
    try {
      const job = await queue.add("catalog-sync", {}, { attempts: 3 });
      await eventually(async () => isFinished(await job.getState()), "the job to end", 10_000);
      const failed = await reload(job);
      expect(await failed.getState()).toBe("failed");
      expect(failed.failedReason).toMatch(/held the lock through 2 waits of 50 ms; giving up/);
      // Given up at once, not retried: the lock would still be held.
      expect(failed.attemptsMade).toBe(1);
    } finally {
      await worker.close();
      await lock.release();
    }
  });

  it("resumes from its checkpoint after the worker process is killed mid-sync", async () => {
    const want = await referenceSha();
    // Slow pages, so that the child can be killed between two of them.
    await control(fx.sandbox, "/_sandbox/faults", { latency_ms: 150 });
    const job = await addJob();
    child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "..", "helpers", "catalog-job-child.ts"),
        fx.sandbox.url,
        fx.dataDir,
        REDIS_URL,
        prefix,
        job.id!,
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    const pages = async () => (await reload(job)).data.checkpoint?.pages ?? 0;
    await eventually(async () => (await pages()) >= 2, "two pages checkpointed", 8000);
    child.kill("SIGKILL");
    await exited;
    child = undefined;
    expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();
    const saved = (await reload(job)).data.checkpoint!;
    expect(saved.pages).toBeLessThan(6);

    await control(fx.sandbox, "/_sandbox/faults", { latency_ms: 0 });
    const result = await processor()(await reload(job));
    // The local checkpoint may be one page ahead of the job data (it is written first).
    const resumed = result.resumedAfterPage!;
    expect(resumed === saved.pages || resumed === saved.pages + 1).toBe(true);
    expect(fx.requestedCursors[0]).toBe(cursorOfPage(fx.sandbox, resumed + 1));
    for (let page = 2; page <= resumed; page++) {
      expect(fx.requestedCursors).not.toContain(cursorOfPage(fx.sandbox, page));
    }
    expect(fx.requestedCursors).not.toContain("");
    expect(result.products).toBe(2600);
    expect((await openCurrentSnapshot(fx.dataDir))!.manifest.sha256).toBe(want);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });
});
