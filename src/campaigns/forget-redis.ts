import type { Redis } from "ioredis";
import { encodeOrder, encodeRow } from "../ledger/codec.js";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerOrder, LedgerRow } from "../ledger/types.js";
import { replyWord } from "../redis/replies.js";
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
  const reply = await runScript(
    redis,
    "giftjobsForgetMark",
    [k.meta, k.counts],
    [JSON.stringify({ now: new Date().toISOString() })],
  );
  const kind = replyWord(reply, "FORGET_MARK");
  if (kind === "forget_marked") return "marked";
  if (kind === "unknown") return "missing";
  if (kind === "not_ended") return kind;
  throw new Error(`FORGET_MARK answered ${kind}, which it never does`);
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
    const args = {
      rows: rows.map(([identity, row]) => [identity, encodeRow(forgetRow(row))]),
      orders: orders.map(([n, order]) => [
        String(n),
        encodeOrder(forgetOrder(order), { campaign, mode }),
      ]),
    };
    const k = ledger.keys(campaign);
    const reply = await runScript(
      redis,
      "giftjobsForgetRecords",
      [k.meta, k.counts, k.rows, k.orders],
      [JSON.stringify(args)],
    );
    const kind = replyWord(reply, "FORGET_RECORDS");
    if (kind !== "forgotten")
      throw new Error(`campaign ${campaign} changed while it was forgotten: ${kind}`);
    const [, rowsWritten, ordersWritten] = reply as [string, number, number];
    written.rows += rowsWritten;
    written.orders += ordersWritten;
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
