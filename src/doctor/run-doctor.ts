import { ApiClient } from "../api/client.js";
import type { Config } from "../config.js";
import { registerSecret } from "../log.js";
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
  const [redis, service, database, catalog, retention, paidMemory, spend] = await Promise.all([
    inspectRedis(config, config.prefix).then(redisChecks),
    serviceCheck(client, config.apiUrl),
    databaseCheck(config),
    snapshotCheck(config, options.maxSnapshotAgeHours ?? 26),
    retentionCheck(config),
    paidMemoryCheck(config),
    dailySpendCheck(config),
  ]);
  const checks = [
    ...redis,
    service,
    ...(database ? [database] : []),
    catalog,
    ...(retention ? [retention] : []),
    paidMemory,
    spend,
  ];
  return { ok: checks.every((c) => c.ok), checks };
}
