import type { Redis } from "ioredis";
import { readLuaScript } from "../redis/lua-scripts.js";
import { redisKey } from "../redis/redis-key.js";
import { type IndexedOrder, indexEntry } from "./order-index.js";

/**
 * Claims a message id and, for an order's message, reads the order index's entry for its order
 * id, in one round trip: lua/claim-message.lua, whose header names its KEYS, ARGV and answers.
 */
const CLAIM_MESSAGE = readLuaScript("src/webhooks/lua/claim-message.lua");

const COMMAND = "giftjobsClaimMessage";

/** Where an applied message id is remembered (a string with a TTL). */
export function messageIdKey(prefix: string, id: string): string {
  return redisKey(prefix, "webhook-id", id);
}

/** What the claim found: nothing when the id was claimed before. */
export type Claim = { claimed: false } | { claimed: true; target: IndexedOrder | undefined };

export function defineClaimMessage(redis: Redis): void {
  if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: CLAIM_MESSAGE });
}

/**
 * Claims message `id` for `ttlSeconds` (SET NX) and, when `orderId` is given, reads its order
 * index entry (see CLAIM_MESSAGE). `defineClaimMessage(redis)` must have run.
 */
export async function claimMessage(
  redis: Redis,
  prefix: string,
  claim: { id: string; ttlSeconds: number; orderId: string | undefined },
): Promise<Claim> {
  const run = (redis as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[
    COMMAND
  ]!;
  const reply = (await run.call(
    redis,
    messageIdKey(prefix, claim.id),
    redisKey(prefix, "order-ids"),
    String(Date.now()),
    String(claim.ttlSeconds),
    claim.orderId ?? "",
  )) as [number, string?];
  if (reply[0] === 0) return { claimed: false };
  const entry = reply[1];
  return { claimed: true, target: entry === undefined ? undefined : indexEntry(entry) };
}
