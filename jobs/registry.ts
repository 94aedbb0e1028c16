import { CATALOG_QUEUE } from "./catalog/job.js";
import { MAINTENANCE_QUEUE } from "./maintenance/job.js";
import { ORDERS_QUEUE } from "./orders/job.js";

/**
 * The BullMQ queues of giftjobs, one folder each under jobs/ (its name, job data, options and
 * id rule in job.ts, its processor in process.ts). Every Redis key lives under the configured
 * prefix (BullMQ `prefix` option).
 */
export const QUEUES = {
  orders: ORDERS_QUEUE,
  catalog: CATALOG_QUEUE,
  maintenance: MAINTENANCE_QUEUE,
} as const;
