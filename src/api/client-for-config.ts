import type { Config } from "../config.js";
import { registerSecret } from "../log.js";
import { ApiClient, type ApiClientOptions } from "./client.js";

/**
 * The client of the configured service: base URL, key, version and timeout from the config.
 * The key is registered as a secret here, where every client is made, so a library user's logs
 * and error messages are scrubbed of it as the CLI's are.
 */
export function apiClientFor(
  config: Config,
  onResponse?: ApiClientOptions["onResponse"],
): ApiClient {
  registerSecret(config.apiKey);
  return new ApiClient({
    baseUrl: config.apiUrl,
    apiKey: config.apiKey,
    apiVersion: config.apiVersion,
    timeoutMs: config.requestTimeoutMs,
    onResponse,
  });
}
