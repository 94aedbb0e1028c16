// The local sandbox of the service: for the demo, the tests and the benchmarks. The exports
// tagged @internal are the tests' (docs/development.md, "Exports for tests"); they stand in
// statements of their own, so the order is kept by hand.
// biome-ignore-all assist/source/organizeImports: a tag applies to a whole export statement
/** @internal */
export { apiKeyId } from "./control-routes.js";
/** @internal */
export { generateCatalog } from "./generate-catalog.js";
/** @internal */
export type { OrderAttempt } from "./order-attempts.js";
/** @internal */
export { mulberry32 } from "./prng.js";
/** @internal */
export { LATEST_VERSION, type Sandbox } from "./server.js";
export { type SandboxOptions, startSandbox } from "./server.js";
/** @internal */
export type { Product } from "./types.js";
export { faultAmount } from "./webhook-faults.js";
/** @internal */
export type { WebhookStats } from "./webhook-sender.js";
export { webhookKey } from "./webhook-sender.js";
