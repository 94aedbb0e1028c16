import type { JobsOptions, Queue } from "bullmq";
import pRetry from "p-retry";
import { ORDER_JOB_OPTIONS, type OrderJobData, orderJobId } from "./job.js";

/** Jobs added per addBulk call: large enough to amortise round trips, small enough to retry. */
const ENQUEUE_CHUNK = 500;

/**
 * Adds order jobs in chunks with addBulk, jobId = the order's (orderJobId). addBulk is not atomic: a chunk
 * that fails is sent again, and the job ids make the repeat harmless (BullMQ ignores an id
 * it already holds).
 */
export async function enqueueOrders(
  queue: Queue<OrderJobData>,
  jobs: OrderJobData[],
  options: JobsOptions = ORDER_JOB_OPTIONS,
): Promise<void> {
  for (let i = 0; i < jobs.length; i += ENQUEUE_CHUNK) {
    const chunk = jobs.slice(i, i + ENQUEUE_CHUNK).map((data) => ({
      name: "order-create",
      data,
      opts: { ...options, jobId: orderJobId(data.campaign, data.order) },
    }));
    await pRetry(() => queue.addBulk(chunk), { retries: 3, minTimeout: 200 });
  }
}

/**
 * Adds order jobs in the order given, each with its own options (its campaign's retry policy),
 * in chunks with addBulk; jobId = the order's, so a repeat is harmless.
 */
export async function enqueueEach(
  queue: Queue<OrderJobData>,
  jobs: { data: OrderJobData; options: JobsOptions }[],
): Promise<void> {
  for (let i = 0; i < jobs.length; i += ENQUEUE_CHUNK) {
    const chunk = jobs.slice(i, i + ENQUEUE_CHUNK).map(({ data, options }) => ({
      name: "order-create",
      data,
      opts: { ...options, jobId: orderJobId(data.campaign, data.order) },
    }));
    await pRetry(() => queue.addBulk(chunk), { retries: 3, minTimeout: 200 });
  }
}
