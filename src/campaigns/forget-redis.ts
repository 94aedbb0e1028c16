import type { Redis } from "ioredis";
import { encodeOrder, encodeRow } from "../ledger/codec.js";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerOrder, LedgerRow } from "../ledger/types.js";
import { runScript } from "../redis/scripts.js";
import { FORGET_FIELDS, forgetOrder, forgetRow } from "./forget-records.js";

const BATCH = 500;

/**
 * Marks the campaign's forget begun, if it is ended (see forget-mark.lua). `not_ended`: rows are
 * pending or failed_uncertain.
 */
export async function markForget(
  redis: Redis,
  ledger: Ledger,
  campaign: string,
): Promise<"marked" | "missing" | "not_ended"> {
  const k = ledger.keys(campaign);
  const [code, why] = (await runScript(
    redis,
    "giftjobsForgetMark",
    [k.meta, k.counts],
    [new Date().toISOString()],
  )) as [number, string?];
  return code === 1 ? "marked" : (why as "missing" | "not_ended");
}

/** What the Redis part of a forget rewrote. */
export interface RedisForgotten {
  rows: number;
  orders: number;
}

/**
 * Rewrites every row and order the campaign holds in Redis without its people's data, a batch
 * per script (forget-records.lua), each only while the forget is marked and the campaign ended.
 * A campaign archived holds none: its tombstone has no rows or orders.
 */
export async function forgetInRedis(
  redis: Redis,
  ledger: Ledger,
  campaign: string,
): Promise<RedisForgotten> {
  const mode = (await ledger.campaigns.meta(campaign)).execution_mode;
  const written = { rows: 0, orders: 0 };
  const write = async (rows: [string, LedgerRow][], orders: [number, LedgerOrder][]) => {
    const args = [String(rows.length)];
    for (const [identity, row] of rows) args.push(identity, encodeRow(forgetRow(row)));
    for (const [n, order] of orders)
      args.push(String(n), encodeOrder(forgetOrder(order), { campaign, mode }));
    const k = ledger.keys(campaign);
    const [code, a, b] = (await runScript(
      redis,
      "giftjobsForgetRecords",
      [k.meta, k.counts, k.rows, k.orders],
      args,
    )) as [number, number | string, number?];
    if (code !== 1) throw new Error(`campaign ${campaign} changed while it was forgotten: ${a}`);
    written.rows += Number(a);
    written.orders += Number(b);
  };
  let rows: [string, LedgerRow][] = [];
  for await (const entry of ledger.orders.rows(campaign)) {
    rows.push(entry);
    if (rows.length === BATCH) {
      await write(rows, []);
      rows = [];
    }
  }
  if (rows.length > 0) await write(rows, []);
  let orders: [number, LedgerOrder][] = [];
  for await (const entry of ledger.orders.all(campaign)) {
    orders.push(entry);
    if (orders.length === BATCH) {
      await write([], orders);
      orders = [];
    }
  }
  if (orders.length > 0) await write([], orders);
  return written;
}

/** Records the forget finished (the campaign shows it from now on). */
export async function markForgotten(
  redis: Redis,
  ledger: Ledger,
  campaign: string,
): Promise<string> {
  const meta = await ledger.campaigns.meta(campaign);
  const at = (meta as Record<string, string | undefined>)[FORGET_FIELDS.done];
  if (at) return at;
  const now = new Date().toISOString();
  await redis.hset(ledger.keys(campaign).meta, FORGET_FIELDS.done, now);
  return now;
}
