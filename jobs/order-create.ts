import type { Job } from "bullmq";
import {
  type CreateOrderDeps,
  type CreateOrderJobResult,
  processCreateOrder,
} from "../src/orders/create-order.js";
import type { OrderJobData } from "../src/orders/order-job.js";

export type { CreateOrderDeps, CreateOrderJobResult } from "../src/orders/create-order.js";

/**
 * The processor of `order-create` jobs on the `orders` queue: POST /v2/order under the job's
 * key and the outcome recorded in the ledger, as DESIGN.md "Outcomes" says (processCreateOrder).
 * The job's AbortSignal cancels the request when the worker shuts down.
 */
export function createOrderCreateProcessor(
  deps: CreateOrderDeps,
): (job: Job<OrderJobData>, token?: string, signal?: AbortSignal) => Promise<CreateOrderJobResult> {
  return (job, token, signal) => processCreateOrder(job, token, signal, deps);
}
