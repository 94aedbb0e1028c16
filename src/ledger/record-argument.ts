import type { ExecutionMode } from "../api/order-request.js";
import { encodeOrder, rowTail } from "./codec.js";
import type { NewOrder } from "./types.js";

/** New orders as RECORD's arguments (see LedgerOrders.recordEncoded). */
export interface EncodedRecord {
  campaign: string;
  /** RECORD's ARGV: the batch's JSON object, then its texts (lua/record.lua). */
  args: string[];
  /** The import's fence this batch passes (see RecordFence); none outside an import. */
  fence?: string;
}

/**
 * Where an import's batches go through RECORD's fence: its own id, and each batch's number in
 * it, from 1. An import sends a batch before the one before it has answered; RECORD records a
 * batch only after that one (docs/architecture/import.md, "Pass 2 in step").
 */
export interface RecordFence {
  id: string;
  batch: number;
}

/**
 * New orders as RECORD takes them, for a campaign of `mode` (as stored: its orders do not repeat
 * it). An order whose send_at is past by now goes to the pending list, a later one to the
 * scheduled set.
 */
export function encodeRecord(
  campaign: string,
  orders: readonly NewOrder[],
  mode: ExecutionMode | null,
  fence?: RecordFence,
): EncodedRecord {
  const now = Date.now();
  const context = { campaign, mode: mode ?? undefined };
  // ARGV[1] goes first once made; the texts follow it, each order's JSON and then its rows'
  // identities and tails, as Redis takes them, unescaped (lua/record.lua).
  const args: string[] = [""];
  const batch = orders.map(({ order, rows }) => {
    args.push(encodeOrder(order, context));
    const lines = rows.map(([identity, row]) => {
      args.push(identity, rowTail(row));
      return row.line;
    });
    const sendAt = order.send_at !== undefined && order.send_at > now ? String(order.send_at) : "";
    return [order.status, order.currency ?? "", order.face ?? "", order.price ?? "", sendAt, lines];
  });
  if (!fence) {
    args[0] = JSON.stringify({ campaign, orders: batch });
    return { campaign, args };
  }
  args[0] = JSON.stringify({ campaign, orders: batch, fence: fence.batch });
  return { campaign, args, fence: fence.id };
}
