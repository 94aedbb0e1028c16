// The set-up the dashboard's tests share: a prefix of the test's own, the settings a dashboard
// reads (no service: its URL answers nothing) and a ledger under that prefix (issue 44).
import type { Redis } from "ioredis";
import { type Config, loadConfig } from "../../src/config.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { REDIS_URL, uniquePrefix } from "./redis.js";

export interface DashboardLedger {
  prefix: string;
  config: Config;
  ledger: Ledger;
}

/** A new prefix (removed after the test), its settings and its ledger on `redis`. */
export function dashboardLedger(redis: Redis, label: string): DashboardLedger {
  const prefix = uniquePrefix(label);
  const config = loadConfig({
    env: {
      GIFTJOBS_API_URL: "http://127.0.0.1:9",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
    },
  });
  return { prefix, config, ledger: new Ledger(redis, prefix) };
}
