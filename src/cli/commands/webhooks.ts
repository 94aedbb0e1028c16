import { Registry } from "prom-client";
import { startMetricsServer } from "../../metrics/metrics-server.js";
import { WebhookMetrics } from "../../metrics/webhook-metrics.js";
import { OutageReporter, redisAddress } from "../../redis/outage-reporter.js";
import { startReceiverFor } from "../../webhooks/receiver-for-config.js";
import { webhookSecretFrom } from "../../webhooks/webhook-secret.js";
import { createContext } from "../run-action.js";
import { untilSignal } from "../until-signal.js";

interface WebhooksFlags {
  port: number;
  host: string;
  metricsPort?: number;
  metricsHost: string;
  storePayoutUrls?: boolean;
}

/** `webhooks`: the receiver (and its metrics) until SIGINT or SIGTERM. */
export async function runWebhooks(opts: WebhooksFlags): Promise<number> {
  const secret = webhookSecretFrom();
  const ctx = createContext();
  const registry = new Registry();
  const metrics = new WebhookMetrics(registry);
  let outage: OutageReporter | undefined;
  const receiver = await startReceiverFor(ctx.config, {
    secret,
    log: ctx.log,
    port: opts.port,
    host: opts.host,
    storePayoutUrls: opts.storePayoutUrls,
    onMessage: metrics.onMessage,
    // While Redis is away the receiver answers 5xx (the service sends again); this says
    // so in one line every few seconds instead of an error per reconnect.
    onConnection: (redis) => {
      outage = new OutageReporter(redisAddress(ctx.config)).watch(redis);
    },
  });
  const server =
    opts.metricsPort === undefined
      ? undefined
      : await startMetricsServer({
          registry,
          port: opts.metricsPort,
          host: opts.metricsHost,
          log: ctx.log,
        });
  ctx.log.info({ url: receiver.url, metrics: server?.url }, "receiving webhooks");
  // Listened for before the line that says it is ready: a supervisor may stop it right after.
  const stopped = untilSignal();
  process.stdout.write(`webhooks receiver listening on ${receiver.url}\n`);
  await stopped;
  await receiver.close();
  await server?.close();
  outage?.close();
  return 0;
}
