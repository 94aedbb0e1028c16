// The local sandbox of the service: for the demo, the tests and the benchmarks.
export { ApiError, ERROR_STATUS, type ErrorType, type ValidationDetail } from "./api-error.js";
export { Catalog, type PageQuery } from "./catalog.js";
export { apiKeyId } from "./control-routes.js";
export {
  DEFAULT_FAULTS,
  type Faults,
  type PageFaultKind,
  type ProductPageFault,
  parseFaults,
} from "./faults.js";
export {
  compareCodes,
  type GenerateCatalogOptions,
  generateCatalog,
} from "./generate-catalog.js";
export type { OrderAttempt, OrderAttemptListener } from "./order-attempts.js";
export { DEFAULT_BALANCE, DEFAULT_TEMPLATE_ID, type StoredOrder } from "./order-book.js";
export { mulberry32 } from "./prng.js";
export {
  KNOWN_VERSIONS,
  LATEST_VERSION,
  REMOVED_VERSIONS,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
} from "./server.js";
export { type CatalogMutation, type OldKeyAnswer, SandboxState } from "./state.js";
export type { Order, OrderItem, Product } from "./types.js";
export {
  type FaultAmount,
  faultAmount,
  parseWebhookFaults,
  type WebhookFaults,
} from "./webhook-faults.js";
export {
  signWebhook,
  type WebhookSender,
  type WebhookStats,
  type WebhookType,
  webhookKey,
} from "./webhook-sender.js";
