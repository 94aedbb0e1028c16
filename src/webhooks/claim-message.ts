import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";
import { runScript } from "../redis/scripts.js";
import { type IndexedOrder, indexEntry } from "./order-index.js";

/** Where an applied message id is remembered (a string with a TTL). */
export function messageIdKey(prefix: string, id: string): string {
  return redisKey(prefix, "webhook-id", id);
}

/** What the claim found: nothing when the id was claimed before. */
export type Claim = { claimed: false } | { claimed: true; target: IndexedOrder | undefined };

/**
 * Claims message `id` for `ttlSeconds` (SET NX) and, when `orderId` is given, reads its order
 * index entry, in one round trip: lua/claim-message.lua, whose header names its KEYS, ARGV and
 * answers.
 */
export async function claimMessage(
  redis: Redis,
  prefix: string,
  claim: { id: string; ttlSeconds: number; orderId: string | undefined },
): Promise<Claim> {
  const reply = (await runScript(
    redis,
    "giftjobsClaimMessage",
    [messageIdKey(prefix, claim.id), redisKey(prefix, "order-ids")],
    [String(Date.now()), String(claim.ttlSeconds), claim.orderId ?? ""],
  )) as [number, string?];
  if (reply[0] === 0) return { claimed: false };
  const entry = reply[1];
  return { claimed: true, target: entry === undefined ? undefined : indexEntry(entry) };
}
