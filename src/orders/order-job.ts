import type { ExecutionMode } from "../api/order-request.js";

/**
 * Data of an `orders` job (jobId = order key): just enough to find the order in the ledger,
 * which holds its rows, generation and request body. No e-mail address, never the API key.
 */
export interface OrderJobData {
  campaign: string;
  key: string;
  /** The mode is the ledger's (the order's own); kept on jobs added before it was. */
  executionMode?: ExecutionMode;
  /** 429s this job met; past MAX_RATE_LIMITED they use up attempts like any ambiguous outcome. */
  rateLimited?: number;
}
