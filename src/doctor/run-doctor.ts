import { ApiClient } from "../api/client.js";
import type { Config } from "../config.js";
import { registerSecret } from "../log.js";
import { openStores } from "../stores/stores.js";
import { dailySpendCheck } from "./daily-spend-check.js";
import { databaseCheck } from "./database-check.js";
import type { DoctorCheck } from "./doctor-check.js";
import { paidMemoryCheck } from "./paid-memory-check.js";
import { redisChecks } from "./redis-checks.js";
import { inspectRedis } from "./redis-nodes.js";
import { retentionCheck } from "./retention-check.js";
import { serviceCheck } from "./service-check.js";
import { snapshotCheck } from "./snapshot-check.js";

export interface DoctorOptions {
  config: Config;
  /** A snapshot older than this fails. @defaultValue 26 (a nightly sync and some slack) */
  maxSnapshotAgeHours?: number;
  /** The service's answer is awaited this long. @defaultValue 5000 */
  serviceTimeoutMs?: number;
}

export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
}

/**
 * Checks what production needs (docs/operations.md, "Running in production"): Redis reachable
 * (every node of a cluster), maxmemory-policy noeviction, appendonly on, memory headroom, the
 * service's URL and key, PostgreSQL when configured (it answers, its schema is migrated), the
 * current snapshot's age, with GIFTJOBS_FORGET_AFTER_DAYS the campaigns past it, and what the
 * paid memory keeps past GIFTJOBS_REPEAT_WINDOW_DAYS, and today's spend per currency. Every check
 * runs; none throws.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { config } = options;
  registerSecret(config.apiKey);
  const client = new ApiClient({
    baseUrl: config.apiUrl,
    apiKey: config.apiKey,
    apiVersion: config.apiVersion,
    timeoutMs: options.serviceTimeoutMs ?? 5000,
  });
  // Opened once for the checks that read the stores; each says so when they cannot be opened.
  const opening = openStores(config, { max: 2 });
  opening.catch(() => {});
  const [redis, service, postgres, catalog, retention, paidMemory, spend] = await Promise.all([
    inspectRedis(config, config.prefix).then(redisChecks),
    serviceCheck(client, config.apiUrl),
    databaseCheck(config),
    snapshotCheck(opening, options.maxSnapshotAgeHours ?? 26),
    retentionCheck(config),
    paidMemoryCheck(opening, config.repeatWindowDays),
    dailySpendCheck(config),
  ]).finally(() => opening.then((stores) => stores.close()).catch(() => {}));
  const checks = [
    ...redis,
    service,
    ...(postgres ? [postgres] : []),
    catalog,
    ...(retention ? [retention] : []),
    paidMemory,
    spend,
  ];
  return { ok: checks.every((c) => c.ok), checks };
}
