import type { ExecutionMode } from "../api/order-request.js";

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
