// The library (package.json "main"): the main things the CLI does, as functions. How they fit
// together: docs/architecture.md.

export type { OrderJobData } from "../jobs/orders/job.js";
export { QUEUES } from "../jobs/registry.js";
export * from "./api/index.js";
export { loadCurrentIndex } from "./catalog/current-snapshot.js";
export type { CatalogIndex, CatalogIndexEntry } from "./catalog/index-entry.js";
export {
  type SyncCatalogOptions,
  type SyncCatalogResult,
  type SyncProgress,
  syncCatalog,
} from "./catalog/sync-catalog.js";
export { type Config, loadConfig } from "./config.js";
export { ConfigError } from "./errors/config-error.js";
export { RunError } from "./errors/run-error.js";
export { UserError } from "./errors/user-error.js";
export { importCampaign } from "./import/import-campaign.js";
export { ImportRefused } from "./import/import-errors.js";
export type { ImportOptions } from "./import/import-flags.js";
export type { ImportDeps, ImportResult } from "./import/import-types.js";
export { Ledger } from "./ledger/ledger.js";
export { createLogger, maskEmails } from "./log.js";
export * from "./money.js";
export { connectRedis } from "./redis/connection.js";
export { type Sandbox, type SandboxOptions, startSandbox } from "./sandbox/server.js";
export {
  type RunningReceiver,
  startWebhookReceiver,
  type WebhookReceiverOptions,
} from "./webhooks/webhook-receiver.js";
export { webhookSecretFrom } from "./webhooks/webhook-secret.js";
export { startWorkers } from "./worker/start-workers.js";
export type {
  RunningWorkers,
  StartWorkersOptions,
  WorkerHooks,
  WorkerQueue,
} from "./worker/worker-options.js";
