import { OrderFollower, type OrderFollowerOptions } from "../src/orders/order-follower.js";

export type { OrderFollowerOptions } from "../src/orders/order-follower.js";

/**
 * `order-status`: follows async orders (202 PROCESSING) with GET /v2/order/{id}, backing off,
 * until COMPLETED or FAILED. It is not one BullMQ job per poll: the orders to follow are a Redis
 * sorted set the ledger keeps in the same script that makes an order submitted, and every worker
 * process takes due orders from it under a lease (OrderFollower). A poll is then one GET and one
 * ledger script, about half the Redis work of a delayed job per poll (bench: orders (a)), and an
 * order can never be submitted without being followed.
 */
export function startOrderStatusFollower(options: OrderFollowerOptions): OrderFollower {
  const follower = new OrderFollower(options);
  follower.start();
  return follower;
}
