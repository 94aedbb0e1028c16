// A campaign env whose sandbox sends webhooks to a real receiver (src/webhooks) over HTTP.
import { join } from "node:path";
import { Registry } from "prom-client";
import { Webhook } from "standardwebhooks";
import { afterEach, expect } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import type { ProductOverride, ProductOverrideStore } from "../../src/catalog/product-overrides.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { WebhookMetrics } from "../../src/metrics/webhook-metrics.js";
import type { Sandbox, SandboxOptions } from "../../src/sandbox/index.js";
import { type RunningReceiver, startWebhookReceiver } from "../../src/webhooks/webhook-receiver.js";
import { startWorkers } from "../../src/worker/start-workers.js";
import type { RunningWorkers } from "../../src/worker/worker-options.js";
import { type CampaignEnv, campaignEnv, depsOf, FAST_TIMINGS, quietLog } from "./campaign-env.js";
import { writeLargeCsv } from "./csv.js";
import { testRedis } from "./redis.js";
import { eventually } from "./wait-for.js";
import { newWebhookSecret } from "./webhook-inbox.js";

export interface WebhookEnv {
  env: CampaignEnv;
  receiver: RunningReceiver;
  secret: string;
  registry: Registry;
  /** Starts in-process order workers with webhooks on (first poll after `firstPollDelayMs`). */
  work(firstPollDelayMs?: number): Promise<RunningWorkers>;
  dispose(): Promise<void>;
}

/** A campaign env, a receiver on a free port, and the sandbox sending to it (retries quick). */
export async function webhookEnv(
  label: string,
  sandboxOptions: SandboxOptions = {},
  webhookOptions: Partial<Parameters<CampaignEnv["sandbox"]["setWebhooks"]>[0]> = {},
): Promise<WebhookEnv> {
  const env = await campaignEnv({ asyncCompleteMs: 50, ...sandboxOptions }, label);
  const redis = testRedis();
  const secret = newWebhookSecret();
  const registry = new Registry();
  const metrics = new WebhookMetrics(registry);
  const receiver = await startWebhookReceiver({
    redis,
    prefix: env.config.prefix,
    dataDir: env.dataDir,
    secret,
    log: quietLog,
    port: 0,
    onMessage: metrics.onMessage,
  });
  await env.sandbox.setWebhooks({
    webhookUrl: receiver.url,
    webhookSecret: secret,
    webhookRetryBaseMs: 50,
    ...webhookOptions,
  });
  const workers: RunningWorkers[] = [];
  return {
    env,
    receiver,
    secret,
    registry,
    work: async (firstPollDelayMs = 60_000) => {
      const running = await startWorkers({
        config: env.config,
        log: quietLog,
        queues: ["orders"],
        concurrency: 10,
        timings: FAST_TIMINGS,
        webhooks: { firstPollDelayMs },
      });
      workers.push(running);
      return running;
    },
    dispose: async () => {
      await Promise.all(workers.map((w) => w.close()));
      await env.sandbox.webhooks?.close();
      await receiver.close();
      await redis.quit();
      await env.dispose();
    },
  };
}

/** A webhookEnv for each test that asks for one (`setup`, webhookEnv's arguments), disposed after it. */
export function useWebhookEnv(): { setup: typeof webhookEnv } {
  let current: WebhookEnv | undefined;
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  return {
    setup: async (...args) => {
      current = await webhookEnv(...args);
      return current;
    },
  };
}

/** Imports `rows` async rows, one per order, into `campaign`, running. */
export async function importRows(w: WebhookEnv, campaign: string, rows: number): Promise<void> {
  const file = join(w.env.dataDir, `${campaign}.csv`);
  await writeLargeCsv(w.env.index, file, rows);
  const result = await importCampaign(
    { file, campaign, executionMode: "async", confirm: async () => true },
    depsOf(w.env),
  );
  expect(result.orders).toBe(rows);
}

/** Waits (90 s at most) until every row of `campaign` is completed, failed_final or failed_uncertain. */
export async function rowsEnded(w: WebhookEnv, campaign: string, rows: number): Promise<void> {
  await eventually(
    async () => {
      const s = await campaignStatus(w.env.ledger, campaign);
      return s.completed + s.failed_final + s.failed_uncertain === rows;
    },
    `${rows} rows ended`,
    90_000,
  );
}

/** How postSigned signs: `id`, `at`, the signature header's value, and under which names. */
export interface SignOptions {
  id?: string;
  at?: Date;
  /** The signature header's whole value; by default one signature under `secret`. */
  signature?: string;
  /** `svix` (`svix-id`, ...: what the service sends, through Svix) or `webhook` (`webhook-id`). */
  scheme?: "svix" | "webhook";
  headers?: Record<string, string>;
}

/**
 * POSTs `body` to the receiver signed with `secret` (or as given), under Svix's header names
 * unless `scheme` says otherwise; answers status and JSON.
 */
export async function postSigned(
  url: string,
  secret: string,
  body: unknown,
  options: SignOptions = {},
): Promise<{ status: number; result: string | undefined }> {
  const text = JSON.stringify(body);
  const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
  const at = options.at ?? new Date();
  const scheme = options.scheme ?? "svix";
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [`${scheme}-id`]: id,
    [`${scheme}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
    [`${scheme}-signature`]: options.signature ?? new Webhook(secret).sign(id, at, text),
    ...options.headers,
  };
  const res = await fetch(url, { method: "POST", headers, body: text });
  const json = (await res.json().catch(() => ({}))) as { result?: string };
  return { status: res.status, result: json.result };
}

/** The value of giftjobs_webhook_messages_total{type, result}. */
export async function messagesCounted(
  registry: Registry,
  type: string,
  result: string,
): Promise<number> {
  const metric = await registry.getSingleMetric("giftjobs_webhook_messages_total")?.get();
  const value = metric?.values.find((v) => v.labels.type === type && v.labels.result === result);
  return value?.value ?? 0;
}

/**
 * The sandbox changes `code`'s is_orderable (POST /_sandbox/products/{code}) and sends its
 * product.update; resolves once `store` holds that state, with what it holds.
 */
export async function pushOrderable(
  sandbox: Sandbox,
  store: ProductOverrideStore,
  code: string,
  orderable: boolean,
): Promise<ProductOverride> {
  const res = await fetch(`${sandbox.url}/_sandbox/products/${code}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ is_orderable: orderable }),
  });
  expect(res.status).toBe(200);
  let held: ProductOverride | undefined;
  await eventually(async () => {
    held = (await store.read())[code];
    return held?.state.is_orderable === orderable;
  }, `the product.update of ${code} recorded`);
  return held!;
}
