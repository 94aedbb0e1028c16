import type { Config } from "../config.js";
import { ApiClient, type ApiClientOptions } from "./client.js";

/** The client of the configured service: base URL, key, version and timeout from the config. */
export function apiClientFor(
  config: Config,
  onResponse?: ApiClientOptions["onResponse"],
): ApiClient {
  return new ApiClient({
    baseUrl: config.apiUrl,
    apiKey: config.apiKey,
    apiVersion: config.apiVersion,
    timeoutMs: config.requestTimeoutMs,
    onResponse,
  });
}
