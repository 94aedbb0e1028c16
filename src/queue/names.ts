/** Queue names. Every Redis key lives under the configured prefix (BullMQ `prefix` option). */
export const QUEUES = {
  orders: "orders",
  catalog: "catalog",
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * Key of a non-BullMQ structure (ledger, locks, checkpoints) under the prefix. With a Redis
 * Cluster `{hash-tag}` prefix every key of giftjobs lands in one slot, which Lua scripts need.
 */
export function redisKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(":");
}
