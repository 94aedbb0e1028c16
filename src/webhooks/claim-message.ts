import type { Redis } from "ioredis";
import { decodeOrder } from "../orders/ledger-codec.js";
import type { LedgerOrder } from "../orders/ledger-types.js";
import { redisKey } from "../queue/names.js";
import { type IndexedOrder, indexEntry } from "./order-index.js";

/**
 * Claims a message id and, for an order's message, reads what the receiver needs to apply it:
 * the order index's entry and that order as the ledger holds it, in one round trip.
 * KEYS: [1] the id's key (`<prefix>:webhook-id:<id>`), [2] the order index (`<prefix>:order-ids`).
 * ARGV: [1] what the id's key holds (the time, ms), [2] seconds it is kept, [3] the service's
 * order id ("" for a message of no order), [4] `<prefix>:campaign:`.
 * The order's key (`<prefix>:campaign:<name>:orders`) is built from ARGV[4] and the index's
 * entry, as DISPATCH builds its keys: it is in the prefix's slot (docs/architecture.md, "Redis
 * Cluster"). The claim is its one write, made last: a script that fails before it has claimed
 * nothing, so the service's retry is applied. Returns {0} when the id was claimed before; {1}
 * when there is no order id or it is not indexed; {1, entry, order JSON or false} otherwise.
 */
const CLAIM_MESSAGE = `
local entry = false
local order = false
if ARGV[3] ~= '' then entry = redis.call('HGET', KEYS[2], ARGV[3]) end
if entry then
  local space = string.find(entry, ' ', 1, true)
  local campaign = string.sub(entry, 1, space - 1)
  order = redis.call('HGET', ARGV[4] .. campaign .. ':orders', string.sub(entry, space + 1))
end
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then return {0} end
if not entry then return {1} end
return {1, entry, order}
`;

const COMMAND = "giftjobsClaimMessage";

/** Where an applied message id is remembered (a string with a TTL). */
export function messageIdKey(prefix: string, id: string): string {
  return redisKey(prefix, "webhook-id", id);
}

/** What the claim found: nothing when the id was claimed before. */
export type Claim =
  | { claimed: false }
  | { claimed: true; target: IndexedOrder | undefined; order: LedgerOrder | undefined };

export function defineClaimMessage(redis: Redis): void {
  if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: CLAIM_MESSAGE });
}

/**
 * Claims message `id` for `ttlSeconds` (SET NX) and, when `orderId` is given, looks the order up
 * (see CLAIM_MESSAGE). `defineClaimMessage(redis)` must have run.
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
    `${redisKey(prefix, "campaign")}:`,
  )) as [number, string?, (string | null)?];
  if (reply[0] === 0) return { claimed: false };
  const entry = reply[1];
  if (entry === undefined) return { claimed: true, target: undefined, order: undefined };
  const raw = reply[2];
  return { claimed: true, target: indexEntry(entry), order: raw ? decodeOrder(raw) : undefined };
}
