import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";
import { replyWord } from "../redis/replies.js";
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
  const args = {
    at: String(Date.now()),
    ttl: claim.ttlSeconds,
    order_id: claim.orderId || undefined,
  };
  const reply = await runScript(
    redis,
    "giftjobsClaimMessage",
    [messageIdKey(prefix, claim.id), redisKey(prefix, "order-ids")],
    [JSON.stringify(args)],
  );
  return decodeClaim(reply);
}

/** What CLAIM_MESSAGE answers (lua/claim-message.lua), read. */
function decodeClaim(reply: unknown): Claim {
  const kind = replyWord(reply, "CLAIM_MESSAGE");
  if (kind === "claimed_before") return { claimed: false };
  if (kind !== "claimed") throw new Error(`CLAIM_MESSAGE answered ${kind}, which it never does`);
  const entry = (reply as [string, string?])[1];
  return { claimed: true, target: entry === undefined ? undefined : indexEntry(entry) };
}
