import type { DefaultJobOptions } from "bullmq";
import type { ExecutionMode } from "../../src/api/order-request.js";

/**
 * The `orders` queue: one job per order of a campaign, added by the dispatcher from the
 * ledger's pending list (enqueue.ts), run by the processor (process.ts).
 */
export const ORDERS_QUEUE = "orders";

/**
 * Data of an `orders` job (jobId: see orderJobId): just enough to find the order in the
 * ledger, which holds its key, rows and generation. No e-mail address, never the API key.
 */
export interface OrderJobData {
  campaign: string;
  /** The order's number in its campaign. */
  order: number;
  /** The mode is the ledger's (the order's own); kept on jobs added before it was. */
  executionMode?: ExecutionMode;
  /** 429s this job met; past MAX_RATE_LIMITED they use up attempts like any ambiguous outcome. */
  rateLimited?: number;
}

/**
 * The BullMQ job id of an order: its campaign and number, `c1.5` (BullMQ ids hold no ':'; the
 * number after the last dot has none, so no two orders share an id). One job per order; BullMQ
 * ignores a repeat of the same id.
 */
export function orderJobId(campaign: string, order: number): string {
  return `${campaign}.${order}`;
}

/**
 * Defaults for order jobs. Attempts with exponential backoff and jitter are the outer retry
 * layer; p-retry inside one attempt covers only short blips, so the two do not multiply.
 * Completed jobs are removed at once (the ledger is the record, and the jobs in Redis stay
 * bounded by the dispatch windows); the few failed ones (lost jobs) are kept for inspection.
 */
export const ORDER_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: "exponential", delay: 2000, jitter: 0.5 },
  removeOnComplete: true,
  removeOnFail: { count: 1000 },
};
