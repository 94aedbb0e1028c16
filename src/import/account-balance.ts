import type { ApiClient } from "../api/client.js";
import { ApiError, ServiceUnreachableError, UnauthorizedError } from "../api/errors/index.js";
import { withRetries } from "../catalog/retry-policy.js";
import { RunError } from "../errors/run-error.js";
import type { Logger } from "../log.js";
import { keyRefused } from "./key-refused.js";

/**
 * The balance in `currency` for the import's balance check, or undefined when the service does
 * not tell it (the check is then skipped with a warning). A service that cannot be reached
 * (after 3 tries) or that refuses the API key stops the import: the orders could not be sent
 * either, and the message names the setting to check.
 */
export async function accountBalance(
  client: ApiClient,
  currency: string,
  log: Logger,
): Promise<string | undefined> {
  try {
    const balance = await withRetries(() => client.getBalance(currency), {
      retries: 2,
      minDelayMs: 500,
      unreachableTries: 3,
    });
    return balance.balance;
  } catch (error) {
    if (error instanceof UnauthorizedError) throw keyRefused(error);
    if (error instanceof ServiceUnreachableError) {
      const stop = /[.?]$/.test(error.message) ? "" : ".";
      throw new RunError(`${error.message}${stop} Nothing was enqueued.`, { cause: error });
    }
    // The service's answer in a few fields, not the Error (its stack says nothing of use here).
    const fields = error instanceof ApiError ? { error: error.toJSON() } : { err: error };
    log.warn({ currency, ...fields }, "balance not available; balance check skipped");
    return undefined;
  }
}
