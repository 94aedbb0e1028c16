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
} as const;
