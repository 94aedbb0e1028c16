import { Queue, Worker } from "bullmq";
import pLimit from "p-limit";
import type { OrderEndName } from "../../jobs/orders/attempt.js";
import type { OrderJobData } from "../../jobs/orders/job.js";
import { OutageHold } from "../../jobs/orders/outage.js";
import { createOrderCreateProcessor } from "../../jobs/orders/process.js";
import { limiterFor, RateLimitBackoff } from "../../jobs/orders/rate-limit.js";
import { QUEUES } from "../../jobs/registry.js";
import { apiClientFor } from "../api/client-for-config.js";
import { recordAutoPause } from "../audit/auto-pause.js";
import { STALL_FIELDS } from "../campaigns/stall.js";
import { daySpendOf } from "../daily-limit.js";
import { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import { commandClient } from "../redis/connection.js";
import { OrderIndex } from "../webhooks/order-index.js";
import { ProductGuard } from "../webhooks/product-guard.js";
import { WORKER_DEFAULTS } from "../worker-defaults.js";
import { CampaignTracker } from "./campaign-tracker.js";
import { Dispatcher, dispatchWindow } from "./dispatcher.js";
import { startOrderStatusFollower } from "./order-follower.js";
import { type QueueContext, type QueueRunner, quietIfAway } from "./queue-runner.js";
import { ServiceWatch } from "./service-watch.js";

/**
 * Jobs the order worker holds at once for `concurrency` sending slots: a fifth more (at least
 * one), so that while a job records its answer and BullMQ finishes it and hands over the next
 * one (a few Redis round trips), another job already holds the slot it gave back and the
 * service still sees `concurrency` requests in flight (docs/architecture/campaigns.md, "Sending
 * slots").
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function orderJobSlots(concurrency: number): number {
  return concurrency + Math.max(1, Math.ceil(concurrency / 5));
}

/**
 * The `orders` queue's worker (jobs/orders/process.ts), and what runs beside it in the process:
 * the dispatcher that adds the campaigns' jobs, the follower of async orders, the campaign
 * tracker's progress lines.
 */
export function startOrdersQueue(context: QueueContext): QueueRunner {
  const { options, connection, outage, log, active, stores } = context;
  const { config } = options;
  const concurrency = options.concurrency ?? WORKER_DEFAULTS.concurrency;
  const hooks = options.hooks ?? {};
  const client = apiClientFor(config, hooks.onResponse);
  const ledger = new Ledger(commandClient(connection), config.prefix);
  // The database's when configured, else the data dir's files and the Redis hash.
  const { journal, audit } = stores;
  const overrides = stores.productOverrides(ledger);
  // The automatic pauses' entries still being written: a stop waits for them, so that no
  // write reaches the data dir (or the database) after the worker has stopped.
  const auditing = new Set<Promise<void>>();
  const ordersQueue = new Queue<OrderJobData>(QUEUES.orders, {
    connection,
    prefix: config.prefix,
  });
  ordersQueue.on("error", (error) => quietIfAway(outage, log, error, "orders queue error"));
  const timings = options.timings ?? {};
  const rateLimiter = new RateLimitBackoff(
    timings.rateLimitBaseMs ?? WORKER_DEFAULTS.rateLimitBaseMs,
  );
  const orderIndex = options.webhooks
    ? new OrderIndex(commandClient(connection), config.prefix)
    : undefined;
  const firstPollDelayMs = options.webhooks
    ? (options.webhooks.firstPollDelayMs ?? WORKER_DEFAULTS.webhookPollDelayMs)
    : (timings.firstPollDelayMs ?? WORKER_DEFAULTS.firstPollDelayMs);
  const campaigns = new CampaignTracker({
    ledger,
    log,
    tickMs: timings.trackerTickMs,
    intervalMs: timings.trackerIntervalMs,
  });
  campaigns.start();
  const service = new ServiceWatch({
    url: config.apiUrl,
    log,
    mark: (campaign, reason, since) =>
      ledger.campaigns.setMeta(campaign, { stalled_reason: reason, stalled_at: since }),
    unmark: (campaign) => ledger.campaigns.clearMeta(campaign, ...STALL_FIELDS),
    onAnswered: (campaign) => campaigns.answered(campaign),
    onError: (error) =>
      quietIfAway(outage, log, error as Error, "could not mark a campaign stalled"),
    quietMs: timings.serviceQuietMs,
    everyMs: timings.serviceLineMs,
  });
  // Holds the queue while the service does not answer (docs/architecture/sending-orders.md,
  // "Service outages").
  const outageHold = new OutageHold(
    () => service.isDown(),
    timings.outageHoldMs ?? WORKER_DEFAULTS.outageHoldMs,
    timings.outageHoldMaxMs ?? WORKER_DEFAULTS.outageHoldMaxMs,
  );
  // Taking over a stalled job is safe (same key), so stalls may repeat a few times.
  const lockDuration = options.lockDurationMs ?? WORKER_DEFAULTS.lockDurationMs;
  const common = {
    connection,
    prefix: config.prefix,
    concurrency,
    maxStalledCount: 10,
    lockDuration,
    stalledInterval: lockDuration,
  };
  const orderWorker = new Worker<OrderJobData>(
    QUEUES.orders,
    active.counted(
      createOrderCreateProcessor({
        ledger,
        log,
        journal: {
          append: (campaign, line) => journal.append(campaign, [line]),
          void: (campaign, line) => journal.voidChange(campaign, line),
        },
        service: {
          client,
          blipRetries: WORKER_DEFAULTS.blipRetries,
          slots: pLimit(concurrency),
        },
        queue: { ordersQueue, rateLimiter, outageHold },
        limits: {
          dailyLimit: daySpendOf(config),
          productGuard: options.webhooks
            ? new ProductGuard({ overrides, catalog: stores.catalog })
            : undefined,
        },
        recording: {
          storePayoutUrls: options.storePayoutUrls ?? false,
          firstPollDelayMs,
          orderIndex,
        },
        observers: {
          onHeld: (campaign) => service.waiting(campaign),
          onOutcome: hooks.onOutcome,
          onOrderEnded: hooks.onOrderEnded,
          onCampaignPaused: (campaign, reason) => {
            campaigns.pausedHere(campaign, reason);
            hooks.onCampaignPaused?.(campaign, reason);
            // Once per pause this process made (docs/architecture/audit.md, "What is recorded").
            const entry = recordAutoPause(audit, campaign, reason)
              .catch((error) =>
                log.error({ campaign, err: error }, "the audit trail could not record this pause"),
              )
              .finally(() => auditing.delete(entry));
            auditing.add(entry);
          },
          onSending: (campaign) => campaigns.touch(campaign),
          onRequestEnded: (campaign, error) => service.ended(campaign, error),
        },
      }),
    ),
    // No maxStartedAttempts: it would also count the wake-ups of a paused campaign's jobs.
    // 429 loops are capped by the processor itself (OrderJobData.rateLimited).
    {
      ...common,
      concurrency: orderJobSlots(concurrency),
      limiter: limiterFor(config.orderRateLimitPerMinute),
    },
  );
  orderWorker.on(
    "failed",
    (job, error) => void markLostJob(ledger, log, job, error, hooks.onOrderEnded),
  );
  const window =
    options.dispatchWindow ??
    dispatchWindow(config.orderRateLimitPerMinute, orderJobSlots(concurrency));
  hooks.onDispatchWindow?.(window);
  const dispatcher = new Dispatcher({
    ledger,
    queue: ordersQueue,
    log,
    outage,
    window,
    tickMs: timings.dispatchTickMs,
    repairMs: timings.dispatchRepairMs,
  });
  // A job that ends leaves room in its campaign's window.
  orderWorker.on("completed", () => dispatcher.wake());
  dispatcher.start();
  const follower = startOrderStatusFollower({
    client,
    ledger,
    log,
    concurrency,
    storePayoutUrls: options.storePayoutUrls,
    pollDelayMs: timings.pollDelayMs,
    maxPollDelayMs: timings.maxPollDelayMs,
    onOrderEnded: hooks.onOrderEnded,
    orderIndex,
    outage,
    onRequestEnded: (campaign, error) => service.ended(campaign, error),
  });
  return {
    worker: orderWorker,
    beforeWorkers: () => dispatcher.close(),
    afterWorkers: async () => {
      await follower.close();
      service.close();
      await campaigns.close();
      await Promise.all(auditing);
      await ordersQueue.close();
    },
    serviceContact: () => service.contact(),
  };
}

/**
 * Safety net: a job BullMQ failed for good without the processor recording it (stalled too
 * often, too many starts). Its rows must not stay queued forever: an order may exist.
 */
async function markLostJob(
  ledger: Ledger,
  log: Logger,
  job: { data: OrderJobData; attemptsMade: number; opts: { attempts?: number } } | undefined,
  error: Error,
  onOrderEnded?: (outcome: OrderEndName) => void,
): Promise<void> {
  if (!job) return;
  const finalFailure =
    job.attemptsMade >= (job.opts.attempts ?? 1) || error.name === "UnrecoverableError";
  if (!finalFailure) return;
  const moved = await ledger.orders
    .transition({
      campaign: job.data.campaign,
      number: job.data.order,
      from: ["queued", "in_flight"],
      to: "failed_uncertain",
      patch: {
        error_type: "job_failed",
        error_message: error.message,
      },
    })
    .catch(() => ({ moved: false }));
  if (moved.moved) onOrderEnded?.("failed_uncertain");
  if (moved.moved)
    log.warn(
      { campaign: job.data.campaign, order: job.data.order },
      `job failed for good (${error.message}); rows failed_uncertain`,
    );
}
