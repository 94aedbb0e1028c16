import { UserError } from "../../errors/user-error.js";
import { isPlainDecimal } from "../../money.js";
import { faultAmount, type SandboxOptions, startSandbox, webhookKey } from "../../sandbox/index.js";
import { wholeNumber } from "../option-parsers.js";
import { untilSignal } from "../until-signal.js";

export interface SandboxFlags {
  port: string;
  host: string;
  products: string;
  seed: string;
  apiKey?: string;
  balance: string[];
  asyncCompleteMs?: string;
  orderRateLimit?: string;
  failRate?: string;
  dropRate?: string;
  latencyMs?: string;
  asyncFailRate?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  webhookDuplicates?: string;
  webhookOutOfOrder?: string;
  webhookDrop?: string;
  webhookDelayMs?: string;
}

function rate(flag: string, value: string): number {
  const n = /^\d*\.?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= 1))
    throw new UserError(`${flag} must be a number from 0 to 1 (got ${value})`);
  return n;
}

function balances(values: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const match = /^([A-Z]{3})=(.+)$/.exec(value);
    if (!match || !isPlainDecimal(match[2] as string)) {
      throw new UserError(`--balance must look like USD=100000 (got ${value})`);
    }
    out[match[1] as string] = match[2] as string;
  }
  return out;
}

/** Flags to sandbox options; a bad value throws a UserError naming its flag. */
export function sandboxOptions(flags: SandboxFlags): SandboxOptions {
  const options: SandboxOptions = {
    port: wholeNumber("--port", flags.port, 0, 65535),
    host: flags.host,
    products: wholeNumber("--products", flags.products, 0, 2_000_000),
    seed: wholeNumber("--seed", flags.seed, 0, 2 ** 32 - 1),
    balances: balances(flags.balance),
  };
  if (flags.apiKey !== undefined) {
    if (flags.apiKey === "") throw new UserError("--api-key must not be empty");
    options.apiKey = flags.apiKey;
  }
  if (flags.asyncCompleteMs !== undefined) {
    options.asyncCompleteMs = wholeNumber("--async-complete-ms", flags.asyncCompleteMs, 0);
  }
  if (flags.orderRateLimit !== undefined) {
    options.orderRateLimit = wholeNumber("--order-rate-limit", flags.orderRateLimit, 1);
  }
  if (flags.failRate !== undefined) options.failRate = rate("--fail-rate", flags.failRate);
  if (flags.dropRate !== undefined) options.dropRate = rate("--drop-rate", flags.dropRate);
  if (flags.latencyMs !== undefined) {
    options.latencyMs = wholeNumber("--latency-ms", flags.latencyMs, 0);
  }
  if (flags.asyncFailRate !== undefined) {
    options.asyncFailRate = rate("--async-fail-rate", flags.asyncFailRate);
  }
  return { ...options, ...webhookOptions(flags) };
}

/** The --webhook-* flags; a bad one is a UserError naming it. */
function webhookOptions(flags: SandboxFlags): SandboxOptions {
  if (flags.webhookUrl === undefined) {
    if (flags.webhookSecret !== undefined)
      throw new UserError("--webhook-secret needs --webhook-url");
    return {};
  }
  if (!URL.canParse(flags.webhookUrl) || !/^https?:/.test(flags.webhookUrl)) {
    throw new UserError(`--webhook-url must be an http(s) URL (got ${flags.webhookUrl})`);
  }
  const secret = flags.webhookSecret;
  if (secret === undefined) throw new UserError("--webhook-secret is required with --webhook-url");
  try {
    webhookKey(secret);
  } catch {
    // The secret itself is never echoed.
    throw new UserError("--webhook-secret must be whsec_ followed by a base64 key");
  }
  const amount = (flag: string, value: string | undefined) => {
    if (value === undefined) return 0;
    try {
      return faultAmount(flag, value);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
  };
  return {
    webhookUrl: flags.webhookUrl,
    webhookSecret: secret,
    webhookFaults: {
      duplicates: amount("--webhook-duplicates", flags.webhookDuplicates),
      outOfOrder: amount("--webhook-out-of-order", flags.webhookOutOfOrder),
      drop: amount("--webhook-drop", flags.webhookDrop),
      delayMs:
        flags.webhookDelayMs === undefined
          ? 0
          : wholeNumber("--webhook-delay-ms", flags.webhookDelayMs, 0),
    },
  };
}

/** `sandbox`: the local service until SIGINT or SIGTERM. */
export async function runSandbox(flags: SandboxFlags): Promise<number> {
  const options = sandboxOptions(flags);
  const sandbox = await startSandbox(options);
  const key = options.apiKey === undefined ? "none" : "set";
  // Listened for before the line that says it is ready: a supervisor may stop it right after.
  const stopped = untilSignal();
  // The key itself is never printed: "set" says only that one is required.
  process.stdout.write(
    `sandbox listening on ${sandbox.url} (${sandbox.state.catalog.size} products, api key: ${key})\n`,
  );
  await stopped;
  await sandbox.close();
  return 0;
}
