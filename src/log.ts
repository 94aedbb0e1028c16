import { writeSync } from "node:fs";
import { createRequire } from "node:module";
import pino, { type Logger } from "pino";
import type * as PinoPretty from "pino-pretty";
import { isClosedOutput } from "./closed-output.js";

export type { Logger };

const EMAIL = /([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+\.[A-Za-z]{2,})/g;

/** `jane.doe@example.com` -> `j***@example.com`. */
export function maskEmails(text: string): string {
  return text.replace(EMAIL, "$1***@$2");
}

/** Registered secrets, longest first: one that holds another is replaced whole. */
let secrets: string[] = [];

/**
 * Registers a secret (the API key, the Redis password, the webhook secret, the dashboard token):
 * every log line and CLI error message has it replaced by [REDACTED].
 */
export function registerSecret(secret: string | undefined): void {
  if (!secret || secret.length < 4 || secrets.includes(secret)) return;
  secrets = [...secrets, secret].sort((a, b) => b.length - a.length);
}

/** Removes registered secrets from a string; used for logs and error messages alike. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("[REDACTED]");
  return out;
}

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return maskEmails(redactSecrets(value));
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message, depth + 1),
      stack: scrub(value.stack, depth + 1),
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = scrub(v, depth + 1);
  return out;
}

/** Header and field names whose values are secrets, wherever they appear. */
const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "headers['x-api-key']",
  "*.headers['x-api-key']",
  "req.headers['x-api-key']",
  "config.apiKey",
  "headers.authorization",
  "headers.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
];

export interface LoggerOptions {
  level?: string;
  /** Human-readable output; default: when stderr is a terminal. */
  pretty?: boolean;
  /** Destination stream; default stderr (stdout is kept for --json documents). */
  destination?: NodeJS.WritableStream;
}

/**
 * Something drawn on the last line of a terminal's stderr (a progress bar). While one is set,
 * each log line on a terminal clears it first and has it drawn again below: the two never
 * share a line.
 */
export interface StderrOverlay {
  clear(): void;
  redraw(): void;
}

let overlay: StderrOverlay | undefined;

/** Sets (or with undefined removes) the overlay log lines are written above. */
export function setStderrOverlay(value: StderrOverlay | undefined): void {
  overlay = value;
}

/**
 * Writes text to stderr, above the overlay (a progress bar) if one is drawn: for log lines, and
 * for lines written without the logger (the Redis outage lines), so none runs into the bar.
 */
export function writeAboveOverlay(text: string): void {
  const drawn = overlay;
  drawn?.clear();
  try {
    writeSync(2, text);
  } catch (error) {
    // A closed stderr drops the line and ends nothing (docs/architecture/audit.md, "Output
    // that cannot be written"): the pause, stall and outage lines are told, not needed.
    if (!isClosedOutput(error)) throw error;
  }
  drawn?.redraw();
}

/**
 * pino-pretty's formatter, loaded only for a logger that is pretty (a terminal): a command whose
 * logs are JSON does not load it (docs/architecture/command-line.md, "Start-up").
 */
function prettyFormat(options: PinoPretty.PrettyOptions): (line: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return prettyFactory(options);
}

/**
 * stderr as the log's stream, whose write errors are ignored: a line that cannot be written (a
 * closed terminal, a reader gone: EPIPE, EIO) is dropped, and the log call that wrote it goes on,
 * so a long-running worker is never stopped mid-order by its log (docs/architecture/audit.md,
 * "Output that cannot be written").
 */
function stderrDestination(
  overlaid: boolean,
  format: (line: string) => string,
): { write(line: string): void } {
  if (overlaid)
    return {
      write: (line: string) => {
        try {
          writeAboveOverlay(format(line));
        } catch {
          // Dropped: see above.
        }
      },
    };
  const stream = pino.destination({ dest: 2, sync: true });
  // Its error would be thrown by the write that met it; after one, nothing more is written
  // (the line it holds would be tried again at every write, the rest kept behind it).
  let broken = false;
  stream.on("error", () => {
    broken = true;
  });
  return {
    write: (line: string) => {
      if (!broken) stream.write(line);
    },
  };
}

/**
 * The logger: JSON on stderr by default, readable on a terminal. Secrets are redacted and
 * e-mail addresses masked in every message and field.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const terminal = Boolean(process.stderr.isTTY);
  const pretty = options.pretty ?? terminal;
  // Synchronous writes: no worker thread, no lost lines on exit.
  const format = pretty
    ? prettyFormat({ colorize: terminal, translateTime: "HH:MM:ss" })
    : (line: string) => line;
  const destination = options.destination ?? stderrDestination(terminal || pretty, format);
  return pino(
    {
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
      formatters: { log: (object) => scrub(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => scrub(a)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** A logger that writes nothing: the library's default when the caller gives none. */
export const silentLogger: Logger = pino({ level: "silent" });
