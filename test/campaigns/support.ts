import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { type RunningWorkers, startWorkers } from "../../src/jobs/workers.js";
import { sampleCsv } from "../../src/orders/sample-csv.js";
import { type CampaignEnv, quietLog } from "../helpers/campaign-env.js";

export const FAST = {
  pausedDelayMs: 200,
  firstPollDelayMs: 50,
  pollDelayMs: 50,
  rateLimitBaseMs: 200,
  dispatchTickMs: 50,
};

export function runWorkers(env: CampaignEnv): Promise<RunningWorkers> {
  return startWorkers({
    config: env.config,
    log: quietLog,
    queues: ["orders"],
    concurrency: 5,
    timings: FAST,
  });
}

/** Orders the sandbox made, and how many order creations it was asked for. */
export async function sandboxOrders(
  env: CampaignEnv,
): Promise<{ made: { idempotency_key: string }[]; posts: number }> {
  const orders = (await (await fetch(`${env.sandbox.url}/_sandbox/orders`)).json()) as {
    orders: { idempotency_key: string }[];
  };
  const stats = (await (await fetch(`${env.sandbox.url}/_sandbox/stats`)).json()) as {
    requests: Record<string, Record<string, number>>;
  };
  const posts = Object.values(stats.requests["POST /v2/order"] ?? {}).reduce((a, b) => a + b, 0);
  return { made: orders.orders, posts };
}

/** The currencies of orderable LIVE gift cards in the snapshot, most common first. */
export function currenciesOf(index: CatalogIndex): string[] {
  const count = new Map<string, number>();
  for (const e of Object.values(index.entries)) {
    if (!e.is_orderable || e.state !== "LIVE" || !e.denominations) continue;
    if (e.payout_type !== "gift_card") continue;
    count.set(e.currency, (count.get(e.currency) ?? 0) + 1);
  }
  return [...count.entries()].sort((a, b) => b[1] - a[1]).map(([c]) => c);
}

/** A CSV of `rows` rows in each of two currencies, and those currencies. */
export function twoCurrencyCsv(
  index: CatalogIndex,
  rows: number,
): { text: string; currencies: [string, string] } {
  const [a, b] = currenciesOf(index);
  if (!a || !b) throw new Error("the test catalog has fewer than two currencies");
  const first = sampleCsv(index, { rows, currency: a, domain: "a.example.com" });
  const second = sampleCsv(index, { rows, currency: b, domain: "b.example.com" });
  const body = second.trimEnd().split("\n").slice(1).join("\n");
  return { text: `${first}${body}\n`, currencies: [a, b] };
}

/** Every key under the test's prefix but BullMQ's queue meta (the test's Queue writes it). */
export async function redisKeys(env: CampaignEnv): Promise<string[]> {
  const keys = await env.redis.keys(`${env.config.prefix}:*`);
  return keys.filter((key) => key !== `${env.config.prefix}:orders:meta`);
}
