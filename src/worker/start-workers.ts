import type { Worker } from "bullmq";
import type { QUEUES } from "../../jobs/registry.js";
import { WorkerBeats } from "../campaigns/worker-beats.js";
import { StartCancelled } from "../errors/start-cancelled.js";
import { commandClient, connectRedis, type RedisConnection } from "../redis/connection.js";
import { OutageReporter, redisAddress } from "../redis/outage-reporter.js";
import { openStores, type Stores } from "../stores/stores.js";
import { startCatalogQueue } from "./catalog-queue.js";
import { Heartbeat } from "./heartbeat.js";
import { startMaintenanceQueue } from "./maintenance-queue.js";
import { startOrdersQueue } from "./orders-queue.js";
import { type QueueContext, type QueueRunner, quietIfAway } from "./queue-runner.js";
import { ActiveJobs, closeBullWorkers, quitWithin, STOP_MS, settledWithin } from "./shutdown.js";
import type { RunningWorkers, StartWorkersOptions } from "./worker-options.js";

/** How each queue of jobs/registry.ts is run in a worker process: one entry per queue. */
const STARTERS: Record<keyof typeof QUEUES, (context: QueueContext) => QueueRunner> = {
  orders: startOrdersQueue,
  catalog: startCatalogQueue,
  maintenance: startMaintenanceQueue,
};

/** Starts the workers of the chosen queues under the configured prefix. */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  // First: a database that does not answer, or whose schema is not current, stops the start in
  // one line before Redis is waited for.
  const stores = await openStores(options.config);
  try {
    return await startWith(options, stores);
  } catch (error) {
    await stores.close().catch(() => {});
    throw error;
  }
}

async function startWith(options: StartWorkersOptions, stores: Stores): Promise<RunningWorkers> {
  const { config, log } = options;
  const queues = options.queues ?? ["orders", "catalog", "maintenance"];
  // The ledger and BullMQ commands of all jobs in flight go out a turn at a time, not a write each.
  const connection = connectRedis(config, { forWorker: true, coalesceWrites: true });
  // Redis away is one line every few seconds, not an error per retry
  // (docs/architecture/redis.md, "Redis outages").
  const outage = options.outage ?? new OutageReporter(redisAddress(config));
  outage.watch(connection);
  // A worker started before Redis is up waits for it (the PING waits: no retry limit here).
  await firstPing(connection, outage, options.signal, !options.outage);
  const active = new ActiveJobs();
  const context: QueueContext = { options, connection, outage, log, active, stores };
  const runners = (Object.keys(STARTERS) as (keyof typeof STARTERS)[])
    .filter((name) => queues.includes(name))
    .map((name) => STARTERS[name](context));
  const workers: Worker[] = runners.map((runner) => runner.worker);
  for (const worker of workers)
    worker.on("error", (error) => quietIfAway(outage, log, error, "worker error"));
  // Alive for `orders status`, `orders list`, the dashboard and the metrics: a running campaign
  // with no worker is stalled (docs/architecture/operators.md, "Stalled campaigns").
  const heartbeat = new Heartbeat({
    beats: new WorkerBeats(commandClient(connection), config.prefix),
    queues,
    everyMs: options.timings?.heartbeatMs,
    ttlMs: options.timings?.heartbeatTtlMs,
    service: () => runners.find((runner) => runner.serviceContact)?.serviceContact?.(),
    onError: (error) => quietIfAway(outage, log, error as Error, "heartbeat failed"),
  });
  const close = async () => {
    // Bounded like the rest: a pass caught on a command to a cluster node that died would
    // hold the stop for ever; keys it moved are re-sent by another dispatcher's repair.
    await settledWithin(STOP_MS, () => Promise.all(runners.map((r) => r.beforeWorkers?.())));
    await closeBullWorkers(workers, active, log);
    // After the order workers (which may still submit orders), before Redis closes. Bounded:
    // a command stuck on a cluster node that died must not keep a stopping worker alive, and
    // whatever is cut short here is repeated by another worker (a poll's lease runs out).
    await settledWithin(STOP_MS, async () => {
      for (const runner of runners) await runner.afterWorkers?.();
      // Last: this worker counts as alive until it has stopped working.
      await heartbeat.close();
    });
    await quitWithin(connection);
    outage.close();
    await stores.close();
  };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await heartbeat.start();
  } catch (error) {
    // Not started (Redis unreachable, say): the dispatcher, follower and tracker already run;
    // stop them, or they would keep the process alive retrying.
    await close().catch(() => connection.disconnect());
    throw error;
  }
  return { workers, close };
}

/**
 * Waits for Redis's first answer, or for `signal`: then the connection is dropped (no more
 * reconnecting) and StartCancelled is thrown. The PING itself is left unanswered: a connection
 * dropped while it waits to reconnect does not fail the commands it holds.
 */
async function firstPing(
  connection: RedisConnection,
  outage: OutageReporter,
  signal: AbortSignal | undefined,
  ownOutage: boolean,
): Promise<void> {
  if (!signal) {
    await connection.ping();
    return;
  }
  let cancel = () => {};
  const cancelled = new Promise<never>((_, reject) => {
    cancel = () => {
      connection.disconnect();
      if (ownOutage) outage.close();
      reject(new StartCancelled());
    };
  });
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    await Promise.race([connection.ping(), cancelled]);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}
