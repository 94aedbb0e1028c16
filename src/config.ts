import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { ConfigError } from "./errors/config-error.js";
import { packageRoot } from "./package-root.js";

/** Validated configuration of giftjobs. */
export interface Config {
  /** Base URL of the service; the client appends `/v2/...`. */
  apiUrl: string;
  /** The API key. Never printed, logged, stored in Redis or written to a file. */
  apiKey: string | undefined;
  /** Dated API version sent as X-Api-Version; the account's stored version when unset. */
  apiVersion: string | undefined;
  /** @defaultValue `redis://127.0.0.1:6379` */
  redisUrl: string;
  /** Prefix of every Redis key; use a `{hash-tag}` on Redis Cluster. @defaultValue `giftjobs` */
  prefix: string;
  /** Where snapshots, reports and error files go. @defaultValue `./data` */
  dataDir: string;
  /** Template used for rows that name none. */
  templateId: string | undefined;
  /** @defaultValue 30000 */
  requestTimeoutMs: number;
  /** Orders per minute the service allows (queue-wide limiter). @defaultValue 300 */
  orderRateLimitPerMinute: number;
  /** @defaultValue `info` */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /**
   * Every `orders import` records its campaign held, even with --yes: nothing is sent until
   * `orders approve`. @defaultValue false
   */
  requireApproval: boolean;
}

/** Environment variable of each setting; env wins over `config/*.json`. */
export const ENV_NAMES: Record<keyof Config, string> = {
  apiUrl: "GIFTJOBS_API_URL",
  apiKey: "GIFTJOBS_API_KEY",
  apiVersion: "GIFTJOBS_API_VERSION",
  redisUrl: "GIFTJOBS_REDIS_URL",
  prefix: "GIFTJOBS_PREFIX",
  dataDir: "GIFTJOBS_DATA_DIR",
  templateId: "GIFTJOBS_TEMPLATE_ID",
  requestTimeoutMs: "GIFTJOBS_REQUEST_TIMEOUT_MS",
  orderRateLimitPerMinute: "GIFTJOBS_ORDER_RATE_LIMIT",
  logLevel: "GIFTJOBS_LOG_LEVEL",
  requireApproval: "GIFTJOBS_REQUIRE_APPROVAL",
};

const httpUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}, "must be an http:// or https:// URL");

const redisUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return u.protocol === "redis:" || u.protocol === "rediss:";
  } catch {
    return false;
  }
}, "must be a redis:// or rediss:// URL");

const optionalText = z
  .string()
  .nullish()
  .transform((v) => (v ? v : undefined));

const SCHEMA = {
  apiUrl: httpUrl,
  apiKey: optionalText,
  apiVersion: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date like 2024-02-05")
    .nullish()
    .transform((v) => v ?? undefined),
  redisUrl,
  prefix: z
    .string()
    .min(1, "must not be empty")
    .regex(/^[^\s:]+$/, "must have no spaces or ':'"),
  dataDir: z.string().min(1, "must not be empty"),
  templateId: optionalText,
  requestTimeoutMs: z.coerce
    .number()
    .int("must be a whole number")
    .min(100, "must be at least 100"),
  orderRateLimitPerMinute: z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1"),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  // A switch: 1/0 in the environment, true/false in a JSON file; nothing else is guessed at.
  requireApproval: z
    .union([z.boolean(), z.enum(["1", "0", "true", "false"])], {
      error: "must be 1 or 0 (true or false)",
    })
    .transform((v) => v === true || v === "1" || v === "true"),
} satisfies Record<keyof Config, z.ZodType>;

function readJson(path: string, label: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error("not a JSON object");
    }
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(label, `cannot be read: ${(error as Error).message}`);
  }
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra file layered over the defaults; `GIFTJOBS_CONFIG` when not given. */
  file?: string;
  /** Values that win over everything (command-line flags). */
  overrides?: Partial<Record<keyof Config, unknown>>;
}

/**
 * Reads `config/default.json`, then `GIFTJOBS_CONFIG` (a JSON file), then the environment,
 * then overrides; validates every setting. A bad value throws a ConfigError naming the setting.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const defaults = readJson(join(packageRoot(), "config", "default.json"), "config/default.json");
  const filePath = options.file ?? env.GIFTJOBS_CONFIG;
  const fromFile = filePath ? readJson(resolve(filePath), `GIFTJOBS_CONFIG (${filePath})`) : {};
  if (filePath && !existsSync(resolve(filePath))) {
    throw new ConfigError("GIFTJOBS_CONFIG", `file ${filePath} does not exist`);
  }
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(SCHEMA) as (keyof Config)[]) {
    const envName = ENV_NAMES[key];
    let raw: unknown = defaults[key];
    let source = `config/default.json ${key}`;
    if (key in fromFile) {
      raw = fromFile[key];
      source = `${filePath} ${key}`;
    }
    if (env[envName] !== undefined && env[envName] !== "") {
      raw = env[envName];
      source = envName;
    }
    if (options.overrides && options.overrides[key] !== undefined) {
      raw = options.overrides[key];
      source = `--${key}`;
    }
    const parsed = SCHEMA[key].safeParse(raw);
    if (!parsed.success) {
      const problem = parsed.error.issues[0]?.message ?? "is invalid";
      throw new ConfigError(source, `${problem} (got ${describe(key, raw)})`);
    }
    result[key] = parsed.data;
  }
  return result as unknown as Config;
}

function describe(key: keyof Config, raw: unknown): string {
  if (key === "apiKey") return "a hidden value";
  return raw === undefined ? "nothing" : JSON.stringify(raw);
}
