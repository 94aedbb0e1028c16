import type { UnauthorizedError } from "../api/errors/index.js";
import { ENV_NAMES } from "../config.js";
import { RunError } from "../errors/run-error.js";

/**
 * The service refused the API key (401, or 403 `forbidden`): an import stops there, a dry run
 * too, whichever of its calls met the refusal (the estimate of its prices, the key check when
 * the service does not price its rows, the balance check): every order would be refused alike
 * (docs/architecture/import.md, "Prices"). One line, exit 1, naming the setting and what the
 * service answered; never the key (the client's messages do not hold it).
 */
export function keyRefused(error: UnauthorizedError): RunError {
  const said = error.message.includes(ENV_NAMES.apiKey)
    ? error.message
    : `the service refused the API key (${error.type}, HTTP ${error.status}: ${oneLine(error.message)}): check ${ENV_NAMES.apiKey}`;
  const stop = /[.?]$/.test(said) ? "" : ".";
  return new RunError(`${said}${stop} Nothing was enqueued.`, { cause: error });
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/[.]$/, "");
}
