import type { Config } from "../../config.js";
import { StartCancelled } from "../../errors/start-cancelled.js";
import type { Logger } from "../../log.js";
import { type RunningMetrics, startMetrics } from "../../metrics/start-metrics.js";
import { WebhookMetrics } from "../../metrics/webhook-metrics.js";
import { startReceiverFor } from "../../webhooks/receiver-for-config.js";
import type { RunningReceiver } from "../../webhooks/webhook-receiver.js";
import { webhookSecretFrom } from "../../webhooks/webhook-secret.js";
import { startWorkers } from "../../worker/start-workers.js";
import type { WorkerQueue } from "../../worker/worker-options.js";
import { createContext } from "../run-action.js";
import { untilSignal } from "../until-signal.js";

interface WorkerFlags {
  concurrency: number;
  queues: WorkerQueue[];
  storePayoutUrls?: boolean;
  metricsPort?: number;
  metricsHost: string;
  lockDuration: number;
  webhooks?: boolean;
  webhookPort?: number;
  webhookHost: string;
  webhookPollDelay: number;
}

/** Webhooks on: `--webhooks`, `--webhook-port`, or GIFTJOBS_WEBHOOKS=1. */
function webhooksOn(opts: WorkerFlags): boolean {
  return (
    Boolean(opts.webhooks) ||
    opts.webhookPort !== undefined ||
    process.env.GIFTJOBS_WEBHOOKS === "1"
  );
}

/** `worker`: the queues' workers (and metrics, the webhook receiver) until SIGINT or SIGTERM. */
export async function runWorker(opts: WorkerFlags): Promise<number> {
  // A missing secret is told before anything starts.
  const secret = opts.webhookPort === undefined ? undefined : webhookSecretFrom();
  const ctx = createContext();
  const metrics = await metricsIfAsked(opts, ctx.config, ctx.log);
  // Listened to from here: a stop while Redis has not answered yet ends the wait cleanly.
  const starting = new AbortController();
  const stopped = untilSignal().finally(() => starting.abort());
  const running = await startWorkers({
    signal: starting.signal,
    config: ctx.config,
    log: ctx.log,
    queues: opts.queues,
    concurrency: opts.concurrency,
    storePayoutUrls: opts.storePayoutUrls,
    lockDurationMs: opts.lockDuration,
    hooks: metrics?.hooks,
    webhooks: webhooksOn(opts) ? { firstPollDelayMs: opts.webhookPollDelay } : undefined,
  }).catch(async (error) => {
    // An open metrics server would keep the process alive after the failure.
    await metrics?.close();
    if (error instanceof StartCancelled) return undefined;
    throw error;
  });
  if (!running) {
    ctx.log.info("worker stopped before Redis answered; nothing had started");
    exitSoonAfterStop();
    return 0;
  }
  ctx.log.info(
    { queues: opts.queues, concurrency: opts.concurrency },
    "worker started; SIGINT or SIGTERM to stop",
  );
  const receiver = secret
    ? await receiveWebhooks(opts, secret, ctx, metrics).catch(async (error) => {
        await running.close();
        await metrics?.close();
        throw error;
      })
    : undefined;
  await stopped;
  ctx.log.info("stopping: no new jobs; finishing the active ones");
  await receiver?.close();
  await running.close();
  await metrics?.close();
  ctx.log.info("worker stopped");
  exitSoonAfterStop();
  return 0;
}

/** `--webhook-port`: the receiver in this process, its metrics beside the worker's. */
async function receiveWebhooks(
  opts: WorkerFlags,
  secret: string,
  ctx: { config: Config; log: Logger },
  metrics: RunningMetrics | undefined,
): Promise<RunningReceiver> {
  const webhookMetrics = metrics ? new WebhookMetrics(metrics.metrics.registry) : undefined;
  const receiver = await startReceiverFor(ctx.config, {
    secret,
    log: ctx.log,
    port: opts.webhookPort ?? 0,
    host: opts.webhookHost,
    storePayoutUrls: opts.storePayoutUrls,
    onMessage: webhookMetrics?.onMessage,
    onOrderEnded: metrics?.hooks.onOrderEnded,
    // The worker's own connection reports a Redis outage (OutageReporter); the receiver answers
    // 5xx meanwhile and the service sends again, so this connection's errors add nothing.
    onConnection: (redis) => redis.on("error", () => {}),
  });
  ctx.log.info({ url: receiver.url }, "receiving webhooks");
  return receiver;
}

async function metricsIfAsked(
  opts: WorkerFlags,
  config: Config,
  log: Logger,
): Promise<RunningMetrics | undefined> {
  if (opts.metricsPort === undefined) return undefined;
  const metrics = await startMetrics({
    config,
    port: opts.metricsPort,
    host: opts.metricsHost,
    log,
  });
  log.info({ url: metrics.url }, "serving metrics");
  return metrics;
}

/**
 * Everything is closed; the process ends by itself when nothing is left. A BullMQ worker whose
 * close was cut short (see closeBullWorkers) can leave its timers behind, which would keep a
 * stopped worker running: after 2 s it ends anyway (the timer itself keeps nothing alive).
 */
function exitSoonAfterStop(): void {
  setTimeout(() => process.exit(), 2000).unref();
}
