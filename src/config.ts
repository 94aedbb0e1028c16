import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod";
import { isTimeZone } from "./daily-limit.js";
import { ConfigError } from "./errors/config-error.js";
import { registerSecret } from "./log.js";
import { currencyDecimals, fromUnits, toUnits } from "./money.js";
import { packageRoot } from "./package-root.js";

/** Validated configuration of giftjobs. */
export interface Config {
  /** Base URL of the service; the client appends `/v2/...`. */
  apiUrl: string;
  /** The API key. Never printed, logged, stored in Redis or written to a file. */
  apiKey: string | undefined;
  /** Dated API version sent as X-Api-Version; the account's stored version when unset. */
  apiVersion: string | undefined;
  /**
   * Redis; in cluster mode only its credentials (user, password) and scheme (`rediss://`: TLS)
   * are used. @defaultValue `redis://127.0.0.1:6379`
   */
  redisUrl: string;
  /**
   * Seed nodes of a Redis Cluster (`host:port`); when set, every connection is a cluster
   * client and the prefix must hold a hash tag. Unset: one Redis at `redisUrl`.
   */
  redisClusterNodes: ClusterSeed[] | undefined;
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
  /**
   * Four eyes (docs/architecture/audit.md, "Four eyes"): an import whose campaign's planned
   * price is more than this in a currency is held, and whoever imported it cannot approve it.
   * Amounts by currency, at the currency's scale; unset: no such rule.
   */
  approvalThreshold: Record<string, string> | undefined;
  /**
   * PostgreSQL holding the catalog (and the order journal) when set; unset: files under
   * `dataDir` (docs/catalog-database.md, "Settings").
   */
  databaseUrl: string | undefined;
  /** The PostgreSQL schema giftjobs' tables live in. @defaultValue `giftjobs` */
  databaseSchema: string;
  /**
   * How many days back an import looks for rows other campaigns paid (docs/architecture/repeats.md).
   * @defaultValue 90
   */
  repeatWindowDays: number;
  /**
   * The nightly job forgets campaigns that ended more than this many days ago, and `doctor` lists
   * those past it (docs/architecture/forgetting.md). Unset: nothing is forgotten by itself.
   */
  forgetAfterDays: number | undefined;
  /**
   * The most each currency may spend in a day across every campaign (docs/architecture/ledger.md,
   * "The daily limit"): amounts by currency, at the currency's scale; unset: no limit.
   */
  dailyLimit: Record<string, string> | undefined;
  /** The IANA time zone whose midnight starts the daily limit's day. @defaultValue `UTC` */
  limitTz: string;
}

/** One seed node of a Redis Cluster. */
export interface ClusterSeed {
  host: string;
  port: number;
}

/** Environment variable of each setting; env wins over `config/*.json`. */
export const ENV_NAMES: Record<keyof Config, string> = {
  apiUrl: "GIFTJOBS_API_URL",
  apiKey: "GIFTJOBS_API_KEY",
  apiVersion: "GIFTJOBS_API_VERSION",
  redisUrl: "GIFTJOBS_REDIS_URL",
  redisClusterNodes: "GIFTJOBS_REDIS_CLUSTER_NODES",
  prefix: "GIFTJOBS_PREFIX",
  dataDir: "GIFTJOBS_DATA_DIR",
  templateId: "GIFTJOBS_TEMPLATE_ID",
  requestTimeoutMs: "GIFTJOBS_REQUEST_TIMEOUT_MS",
  orderRateLimitPerMinute: "GIFTJOBS_ORDER_RATE_LIMIT",
  logLevel: "GIFTJOBS_LOG_LEVEL",
  requireApproval: "GIFTJOBS_REQUIRE_APPROVAL",
  approvalThreshold: "GIFTJOBS_APPROVAL_THRESHOLD",
  databaseUrl: "GIFTJOBS_DATABASE_URL",
  databaseSchema: "GIFTJOBS_DATABASE_SCHEMA",
  repeatWindowDays: "GIFTJOBS_REPEAT_WINDOW_DAYS",
  forgetAfterDays: "GIFTJOBS_FORGET_AFTER_DAYS",
  dailyLimit: "GIFTJOBS_DAILY_LIMIT",
  limitTz: "GIFTJOBS_LIMIT_TZ",
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

// "host:port,host:port" (or a JSON array of "host:port"); the port is 1..65535.
const clusterNodes = z
  .union([z.string(), z.array(z.string())])
  .nullish()
  .transform((value, ctx) => {
    const parts = (Array.isArray(value) ? value : (value ?? "").split(","))
      .map((part) => part.trim())
      .filter(Boolean);
    if (parts.length === 0) return undefined;
    const seeds: ClusterSeed[] = [];
    for (const part of parts) {
      const match = /^(\[[^\]]+\]|[^\s:,]+):(\d{1,5})$/.exec(part);
      const port = Number(match?.[2]);
      if (!match || port < 1 || port > 65535) {
        ctx.addIssue({
          code: "custom",
          message: `must be host:port,host:port,... (got ${JSON.stringify(withoutCredentials(part))})`,
        });
        return z.NEVER;
      }
      seeds.push({ host: match[1]!.replace(/^\[|\]$/g, ""), port });
    }
    return seeds;
  });

const databaseUrl = z
  .string()
  .nullish()
  .refine((v) => {
    if (!v) return true;
    try {
      const u = new URL(v);
      return u.protocol === "postgres:" || u.protocol === "postgresql:";
    } catch {
      return false;
    }
  }, "must be a postgres:// or postgresql:// URL")
  .transform((v) => (v ? v : undefined));

// "USD:1000,EUR:1000" (or a JSON object {"USD": "1000"} in a config file): amounts by currency.
const amountsByCurrency = z
  .union([z.string(), z.record(z.string(), z.union([z.string(), z.number()]))])
  .nullish()
  .transform((value, ctx) => {
    const pairs =
      typeof value === "string"
        ? value
            .split(",")
            .map((part) => part.trim())
            .filter(Boolean)
            .map((part) => part.split(":").map((s) => s.trim()))
        : Object.entries(value ?? {}).map(([c, a]) => [c, String(a)]);
    if (pairs.length === 0) return undefined;
    const amounts: Record<string, string> = {};
    for (const pair of pairs) {
      const [currency = "", amount = ""] = pair;
      const problem = amountProblem(pair.length, currency, amount, amounts);
      if (problem) {
        ctx.addIssue({ code: "custom", message: problem });
        return z.NEVER;
      }
      amounts[currency] = fromUnits(
        toUnits(amount, currencyDecimals(currency)),
        currencyDecimals(currency),
      );
    }
    return amounts;
  });

/** What is wrong with one `CUR:AMOUNT` of amountsByCurrency, if anything. */
function amountProblem(
  parts: number,
  currency: string,
  amount: string,
  seen: Record<string, string>,
): string | undefined {
  const shown = JSON.stringify(`${currency}:${amount}`);
  if (parts !== 2 || !/^[A-Z]{3}$/.test(currency))
    return `must be CUR:AMOUNT,CUR:AMOUNT (e.g. USD:1000,EUR:1000): ${shown} is not one`;
  if (currency in seen) return `names ${currency} twice`;
  if (!/^(0|[1-9]\d*)(\.\d+)?$/.test(amount) || /^0(\.0*)?$/.test(amount))
    return `${currency}: the amount must be a plain decimal above 0`;
  try {
    toUnits(amount, currencyDecimals(currency));
  } catch {
    return `${currency}: ${amount} has more than ${currencyDecimals(currency)} decimals`;
  }
  return undefined;
}

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
  redisClusterNodes: clusterNodes,
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
  approvalThreshold: amountsByCurrency,
  databaseUrl,
  // Written into SQL as an identifier: plain lower-case names only, so no quoting question arises.
  databaseSchema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case name: letters, digits, _ (63 at most)"),
  repeatWindowDays: z.coerce
    .number()
    .int("must be a whole number of days")
    .min(1, "must be at least 1"),
  forgetAfterDays: z.coerce
    .number()
    .int("must be a whole number of days")
    .min(1, "must be at least 1")
    .nullish()
    .transform((v) => v ?? undefined),
  dailyLimit: amountsByCurrency,
  limitTz: z.string().refine(isTimeZone, "must be an IANA time zone, e.g. UTC or Europe/Paris"),
} satisfies Record<keyof Config, z.ZodType>;

/** Settings an empty environment variable cannot mean "the default" for: where data and keys go. */
const MUST_NOT_BE_EMPTY = new Set<keyof Config>(["dataDir", "prefix", "redisUrl", "apiUrl"]);

function readJson(path: string, label: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error("not a JSON object");
    }
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(label, `cannot be read: ${readProblem(error)}`);
  }
}

/**
 * Why a config file could not be read. JSON.parse quotes the text around a syntax error, which
 * may be a password or the API key: only its position is kept.
 */
function readProblem(error: unknown): string {
  if (!(error instanceof SyntaxError)) return (error as Error).message;
  const position = /at position \d+/.exec(error.message);
  return position ? `not valid JSON (${position[0]})` : "not valid JSON";
}

/**
 * The dashboard's users file a command's token is checked against (GIFTJOBS_USERS_FILE, the
 * dashboard's `--users`; docs/architecture/audit.md, "Who acted"): its path and the setting
 * that named it, for messages; unset (or empty): none. Read here only, as every setting is.
 */
export function usersFileSetting(
  env: NodeJS.ProcessEnv = process.env,
): { path: string; setting: string } | undefined {
  const path = env.GIFTJOBS_USERS_FILE;
  return path ? { path, setting: "GIFTJOBS_USERS_FILE" } : undefined;
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
    if (env[envName] === "" && MUST_NOT_BE_EMPTY.has(key))
      // `GIFTJOBS_DATA_DIR=$UNSET_VARIABLE` would otherwise write beside the default silently.
      throw new ConfigError(
        envName,
        `is set but empty: unset it to use the default (${describe(key, raw)}), or give a value`,
      );
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
  const config = result as unknown as Config;
  checkClusterSettings(config);
  return config;
}

/**
 * The hash tag of a key or prefix as Redis Cluster reads it: what lies between the first `{`
 * and the first `}` after it, when that is not empty. Keys with one tag share one slot.
 */
function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf("{");
  if (open < 0) return undefined;
  const close = prefix.indexOf("}", open + 1);
  if (close <= open + 1) return undefined;
  return prefix.slice(open + 1, close);
}

/**
 * In cluster mode every key of giftjobs must be in one slot (BullMQ's and the ledger's scripts
 * touch many keys at once; docs/architecture/redis.md, "Redis Cluster"), so the prefix needs a hash
 * tag; and a cluster has database 0 only.
 */
function checkClusterSettings(config: Config): void {
  if (!config.redisClusterNodes) return;
  if (hashTagOf(config.prefix) === undefined) {
    const tagged = `{${config.prefix.replace(/[{}]/g, "") || "giftjobs"}}`;
    throw new ConfigError(
      ENV_NAMES.prefix,
      `${JSON.stringify(config.prefix)} has no hash tag, which a Redis Cluster needs (${ENV_NAMES.redisClusterNodes} is set): use ${JSON.stringify(tagged)}`,
    );
  }
  const db = new URL(config.redisUrl).pathname.replace(/^\//, "");
  if (db !== "" && db !== "0") {
    throw new ConfigError(
      ENV_NAMES.redisUrl,
      `a Redis Cluster has database 0 only (got /${db}); remove it from the URL`,
    );
  }
}

/** Settings whose value may carry a Redis user and password. */
const WITH_CREDENTIALS = new Set<keyof Config>(["redisUrl", "redisClusterNodes", "databaseUrl"]);

/** A setting's value as an error may quote it: never the API key, never a Redis password. */
function describe(key: keyof Config, raw: unknown): string {
  if (key === "apiKey") return "a hidden value";
  if (raw === undefined) return "nothing";
  const text = JSON.stringify(raw);
  return WITH_CREDENTIALS.has(key) ? withoutCredentials(text) : text;
}

/**
 * `redis://user:pass@host:6379` as `redis://***@host:6379`. Works on text that is no valid URL
 * too (a mistyped scheme, a bad port, an `@` left unescaped in the password): everything
 * between `//` (or the start) and the last `@` is hidden.
 */
function withoutCredentials(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  const slashes = text.indexOf("//");
  const from = slashes >= 0 && slashes < at ? slashes + 2 : 0;
  return `${text.slice(0, from)}***${text.slice(at)}`;
}

/** The password of a Redis (or PostgreSQL) URL as written (percent-encoded) and as sent; none: []. */
export function redisPasswordsOf(url: string): string[] {
  let written: string;
  try {
    written = new URL(url).password;
  } catch {
    return [];
  }
  if (!written) return [];
  let sent = written;
  try {
    sent = decodeURIComponent(written);
  } catch {
    // A stray `%` is sent as written.
  }
  return [...new Set([written, sent])];
}

/**
 * Registers the secrets of a configuration for redaction (src/log.ts): the API key, the
 * Redis password (which also authenticates to every node of a cluster) and PostgreSQL's.
 */
export function registerConfigSecrets(
  config: Pick<Config, "apiKey" | "redisUrl"> & Partial<Pick<Config, "databaseUrl">>,
): void {
  registerSecret(config.apiKey);
  for (const password of redisPasswordsOf(config.redisUrl)) registerSecret(password);
  if (config.databaseUrl) {
    for (const password of redisPasswordsOf(config.databaseUrl)) registerSecret(password);
  }
}
