import pRetry from "p-retry";
import { ApiError } from "../api/errors/api-error.js";

/** How a catalog request is retried within one sync. */
export interface RetryOptions {
  /** Retries after the first attempt. @defaultValue 4 */
  retries?: number;
  /** First backoff delay; doubles each retry. @defaultValue 1000 */
  minDelayMs?: number;
  /** @defaultValue 30000 */
  maxDelayMs?: number;
  /** Least wait after a 429 (the service asks for 5 s), doubled when it repeats. @defaultValue 5000 */
  rateLimitDelayMs?: number;
}

/** Only what may succeed if sent again: 5xx, timeouts, dropped connections, 429. */
export function isRetriable(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    (error.outcome === "retry-same-key" || error.outcome === "rate-limited")
  );
}

/** Runs `attempt` with backoff on retriable errors; anything else fails at once. */
export function withRetries<T>(
  attempt: () => Promise<T>,
  options: RetryOptions = {},
  signal?: AbortSignal,
  onRetry?: (error: Error, attemptNumber: number) => void,
): Promise<T> {
  const rateLimitDelayMs = options.rateLimitDelayMs ?? 5000;
  let rateLimited = 0;
  return pRetry(attempt, {
    retries: options.retries ?? 4,
    minTimeout: options.minDelayMs ?? 1000,
    maxTimeout: options.maxDelayMs ?? 30_000,
    randomize: true,
    signal,
    shouldRetry: ({ error }) => isRetriable(error),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (retriesLeft === 0 || !isRetriable(error)) return;
      onRetry?.(error, attemptNumber);
      if (error instanceof ApiError && error.outcome === "rate-limited") {
        // The regular backoff may be shorter than the service's minimum wait; top it up.
        await sleep(rateLimitDelayMs * 2 ** rateLimited, signal);
        rateLimited += 1;
      }
    },
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
