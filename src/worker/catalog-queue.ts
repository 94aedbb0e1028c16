import { Worker } from "bullmq";
import type { CatalogSyncJobData, CatalogSyncJobResult } from "../../jobs/catalog/job.js";
import { createCatalogSyncProcessor } from "../../jobs/catalog/process.js";
import { QUEUES } from "../../jobs/registry.js";
import { apiClientFor } from "../api/client-for-config.js";
import type { QueueContext, QueueRunner } from "./queue-runner.js";

/** The `catalog` queue's worker (jobs/catalog/process.ts): one sync at a time. */
export function startCatalogQueue(context: QueueContext): QueueRunner {
  const { options, connection, log, active, stores } = context;
  const { config } = options;
  const hooks = options.hooks ?? {};
  const processor = createCatalogSyncProcessor({
    ...options.catalog,
    // The catalog sync's requests are counted like the order workers' ones.
    client: apiClientFor(config, hooks.onResponse),
    // The data dir's files, or PostgreSQL when configured (docs/catalog-database.md).
    store: stores.catalog,
    apiVersion: config.apiVersion,
    log,
  });
  const worker = new Worker<CatalogSyncJobData, CatalogSyncJobResult>(
    QUEUES.catalog,
    active.counted(processor),
    { connection, prefix: config.prefix, concurrency: 1 },
  );
  return { worker };
}
