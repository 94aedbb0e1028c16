import type { Queue } from "bullmq";
import type { CreateOrderDeps } from "../../jobs/orders/attempt.js";
import { RateLimitBackoff } from "../../jobs/orders/rate-limit.js";
import type { ApiClient } from "../../src/api/client.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { WORKER_DEFAULTS } from "../../src/worker-defaults.js";

/**
 * The order processor's dependencies for a test that calls processCreateOrder itself: the
 * worker's defaults, no client, queue or journal that does anything, and `groups` in their
 * place (each group given whole).
 */
export function orderDeps(ledger: Ledger, groups: Partial<CreateOrderDeps> = {}): CreateOrderDeps {
  return {
    ledger,
    log: silentLogger,
    journal: { append: async () => {} },
    service: { client: {} as ApiClient, blipRetries: WORKER_DEFAULTS.blipRetries },
    queue: {
      ordersQueue: { rateLimit: async () => {} } as unknown as Queue,
      rateLimiter: new RateLimitBackoff(1),
    },
    limits: {},
    recording: { storePayoutUrls: false, firstPollDelayMs: WORKER_DEFAULTS.firstPollDelayMs },
    observers: {},
    ...groups,
  };
}
