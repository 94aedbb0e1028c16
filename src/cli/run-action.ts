import { type Config, loadConfig, registerConfigSecrets } from "../config.js";
import { UserError } from "../errors/user-error.js";
import { createLogger, type Logger, redactSecrets } from "../log.js";

/** What every command gets: validated configuration and a logger. */
export interface CommandContext {
  config: Config;
  log: Logger;
  /** True when the command prints one JSON document on stdout (and shows no progress). */
  json: boolean;
  /** True when progress bars may be drawn (a terminal, not CI, not --json). */
  interactive: boolean;
}

export function createContext(json = false): CommandContext {
  const config = loadConfig();
  registerConfigSecrets(config);
  const log = createLogger({ level: config.logLevel });
  const interactive = !json && Boolean(process.stderr.isTTY) && !process.env.CI;
  return { config, log, json, interactive };
}

/** Prints a JSON document on stdout: the only thing a --json command writes there. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Wraps a command action: user mistakes become one line on stderr and exit 2, run-time
 * failures one line and exit 1. Stack traces only with GIFTJOBS_DEBUG=1.
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number | undefined> | number | undefined,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      process.exitCode = code ?? 0;
    } catch (error) {
      process.exitCode = reportError(error);
    }
  };
}

export function reportError(error: unknown): number {
  const err = error as Error & { exitCode?: number };
  const message = redactSecrets(err?.message ?? String(error));
  const prefix = error instanceof UserError ? "error" : "failed";
  process.stderr.write(`giftjobs: ${prefix}: ${message}\n`);
  if (process.env.GIFTJOBS_DEBUG && err?.stack)
    process.stderr.write(`${redactSecrets(err.stack)}\n`);
  return typeof err?.exitCode === "number" ? err.exitCode : 1;
}
