// The local sandbox of the service: for the demo, the tests and the benchmarks.
export { apiKeyId } from "./control-routes.js";
export { generateCatalog } from "./generate-catalog.js";
export type { OrderAttempt } from "./order-attempts.js";
export { mulberry32 } from "./prng.js";
export { LATEST_VERSION, type Sandbox, type SandboxOptions, startSandbox } from "./server.js";
export type { Product } from "./types.js";
export { faultAmount } from "./webhook-faults.js";
export { type WebhookStats, webhookKey } from "./webhook-sender.js";
