import type { Redis } from "ioredis";
import { redisKey } from "../redis/redis-key.js";
import { type IndexedOrder, indexEntry } from "./order-index.js";

/**
 * Claims a message id and, for an order's message, reads the order index's entry for its order
 * id, in one round trip. Every key it touches is in KEYS (docs/architecture.md, "Redis
 * Cluster"): [1] the id's key (`<prefix>:webhook-id:<id>`), [2] the order index
 * (`<prefix>:order-ids`). The order the entry names is read in the next step, whose key is then
 * known. ARGV: [1] what the id's key holds (the time, ms), [2] seconds it is kept, [3] the
 * service's order id ("" for a message of no order). The claim is its one write, made last: a
 * script that fails before it has claimed nothing, so the service's retry is applied. Returns
 * {0} when the id was claimed before; {1} when there is no order id or it is not indexed;
 * {1, entry} otherwise.
 */
const CLAIM_MESSAGE = `
local entry = false
if ARGV[3] ~= '' then entry = redis.call('HGET', KEYS[2], ARGV[3]) end
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then return {0} end
if not entry then return {1} end
return {1, entry}
`;

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
