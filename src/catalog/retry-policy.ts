import pRetry from "p-retry";
import { ApiError } from "../api/errors/api-error.js";
import { ServiceUnreachableError } from "../api/errors/service-unreachable-error.js";

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
  /**
   * Tries in all when nothing answers at the service's address (connection refused, host not
   * found): a wrong URL or a stopped service does not come back within a command's patience,
   * so the command says so in seconds, not after the whole backoff. @defaultValue 3
   */
  unreachableTries?: number;
}

/** Only what may succeed if sent again: 5xx, timeouts, dropped connections, 429. */
function isRetriable(error: unknown): boolean {
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
  const unreachableTries = options.unreachableTries ?? 3;
  let rateLimited = 0;
  let tries = 0;
  const counted = () => {
    tries += 1;
    return attempt();
  };
  return pRetry(counted, {
    retries: options.retries ?? 4,
    minTimeout: options.minDelayMs ?? 1000,
    maxTimeout: options.maxDelayMs ?? 30_000,
    randomize: true,
    signal,
    shouldRetry: ({ error, attemptNumber }) =>
      isRetriable(error) &&
      !(error instanceof ServiceUnreachableError && attemptNumber >= unreachableTries),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (error instanceof ServiceUnreachableError && attemptNumber >= unreachableTries) return;
      if (retriesLeft === 0 || !isRetriable(error)) return;
      onRetry?.(error, attemptNumber);
      if (error instanceof ApiError && error.outcome === "rate-limited") {
        // The regular backoff may be shorter than the service's minimum wait; top it up.
        await sleep(rateLimitDelayMs * 2 ** rateLimited, signal);
        rateLimited += 1;
      }
    },
  }).catch((error: unknown) => {
    // The message counts the tries, so the user knows this was not a single blip.
    throw error instanceof ServiceUnreachableError && tries > 1 ? error.afterTries(tries) : error;
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
