/**
 * Key of a non-BullMQ structure (ledger, locks, checkpoints) under the prefix. With a Redis
 * Cluster `{hash-tag}` prefix every key of giftjobs lands in one slot, which Lua scripts need.
 */
export function redisKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(":");
}
