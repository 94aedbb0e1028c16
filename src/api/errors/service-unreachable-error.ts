import { ENV_NAMES } from "../../config.js";
import { ApiError, type ApiErrorInit } from "./api-error.js";

export interface ServiceUnreachableInit extends Omit<ApiErrorInit, "message" | "status"> {
  /** The service's base URL, without credentials. */
  url: string;
  /** Why, naming the host: "connection refused by 127.0.0.1:4010". */
  reason: string;
  /** Requests made before giving up. @defaultValue 1 */
  tries?: number;
}

/**
 * Nothing answers at the service's address (connection refused, host not found). Still
 * retry-same-key for a worker, as a dropped connection is, but an interactive command stops
 * after a few tries and says which setting to check. The message never holds the API key.
 */
export class ServiceUnreachableError extends ApiError {
  readonly url: string;
  readonly reason: string;
  readonly tries: number;

  constructor(init: ServiceUnreachableInit) {
    const tries = init.tries ?? 1;
    const after = tries > 1 ? ` after ${tries} tries` : "";
    super("ServiceUnreachableError", {
      ...init,
      status: 0,
      message: `cannot reach the service at ${init.url} (${init.reason})${after}: is ${ENV_NAMES.apiUrl} right?`,
    });
    this.url = init.url;
    this.reason = init.reason;
    this.tries = tries;
  }

  /** The same failure, told as the last of `tries` requests. */
  afterTries(tries: number): ServiceUnreachableError {
    const { url, reason, type } = this;
    return new ServiceUnreachableError({ url, reason, type, tries, cause: this });
  }
}

/** The error types of a request whose connection never opened: no byte of it left. */
const NOTHING_SENT = new Set(["connection_refused", "host_not_found"]);

/**
 * Whether `error` says the request never left this machine: the host was not found, or the
 * connection was refused, so it never opened and the service cannot have read the request
 * (docs/architecture/keys-and-exactly-once.md, "Nothing sent"). A timeout, a reset or a dropped
 * connection may come after the request was sent: those are not.
 */
export function nothingSent(error: unknown): boolean {
  return error instanceof ServiceUnreachableError && NOTHING_SENT.has(error.type);
}
