/**
 * Defaults of the worker's own options (flags of `giftjobs worker`, not settings): the CLI's
 * help and the worker read them here, so each is written once. Apart from config.ts, which
 * loads zod and the logger, so that `giftjobs --help` loads neither
 * (docs/architecture/command-line.md, "Start-up").
 */
export const WORKER_DEFAULTS = {
  /** Requests in flight at once per queue. */
  concurrency: 10,
  /** How soon a crashed worker's jobs are taken over by other workers. */
  lockDurationMs: 30_000,
  /** With webhooks on: first poll of an accepted async order, the safety net. */
  webhookPollDelayMs: 30_000,
  /** Without webhooks: first poll of an accepted async order. */
  firstPollDelayMs: 1000,
  /** Short retries of a blip (a timeout, a dropped connection) inside one attempt, same key. */
  blipRetries: 1,
  /** The first hold of the queue after a 429 (doubling while they repeat). */
  rateLimitBaseMs: 5000,
  /** The first and the longest hold of the queue while the service does not answer. */
  outageHoldMs: 1000,
  outageHoldMaxMs: 30_000,
} as const;
