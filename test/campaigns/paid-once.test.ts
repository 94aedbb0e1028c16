import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { cancelCampaign, pauseCampaign, resumeCampaign } from "../../src/campaigns/control.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { moneyOf } from "../../src/campaigns/summary.js";
import type { Config } from "../../src/config.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import type { LedgerOrder } from "../../src/ledger/ledger.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS } from "../helpers/campaign-env.js";
import { cleanPrefix } from "../helpers/redis.js";
import { control, sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "once";
const MANY_ATTEMPTS = { attempts: 50, backoff: { type: "fixed", delay: 50 } };
const FAST = { ...FAST_TIMINGS, dispatchRepairMs: 300 };

/**
 * The three sequences that paid a row twice or called a paid row unpaid
 * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist"), each against
 * the sandbox over HTTP.
 */
describe("paid once, whatever the service answers", () => {
  const envs = useCampaignEnv();

  async function importRows(
    env: CampaignEnv,
    rows: number,
    file = "rows.csv",
    deps: ImportDeps = depsOf(env),
  ) {
    const path = join(env.dataDir, file);
    await writeFile(path, sampleCsv(env.index, { rows, products: 1 }));
    return importCampaign(
      { file: path, campaign: CAMPAIGN, executionMode: "sync", jobOptions: MANY_ATTEMPTS },
      deps,
    );
  }

  async function work(env: CampaignEnv, config: Partial<Config> = {}) {
    await envs.stopWorkers();
    await envs.work(env, { config: { ...env.config, ...config }, concurrency: 1, timings: FAST });
  }

  async function onlyOrder(env: CampaignEnv): Promise<LedgerOrder> {
    const all: LedgerOrder[] = [];
    for await (const [, order] of env.ledger.orders.all(CAMPAIGN))
      if (order.status !== "superseded") all.push(order);
    expect(all).toHaveLength(1);
    return all[0]!;
  }

  const status = (env: CampaignEnv) => campaignStatus(env.ledger, CAMPAIGN);

  /** The worker pauses the campaign, then gives its order back: both, before a test looks. */
  async function pausedAndGivenBack(env: CampaignEnv, what: string) {
    await eventually(async () => {
      const { state, in_flight } = await status(env);
      return state === "paused" && in_flight === 0;
    }, what);
  }

  it("a timeout, then a 401 after a key rotation: the row keeps its key, one order", async () => {
    const env = await envs.setup("rotation", { latencyMs: 400 });
    await importRows(env, 1);
    const { key } = await onlyOrder(env);
    await work(env, { requestTimeoutMs: 150 });
    // The service made the order; the worker only saw timeouts, and marked the key.
    await eventually(async () => (await sandboxOrders(env.sandbox)).length === 1, "order made");
    await eventually(async () => (await onlyOrder(env)).unclear === "request_timeout", "marked");
    await control(env.sandbox, "/_sandbox/api-key", { api_key: "rotated-key-0987654321" });
    env.sandbox.setFaults({ latencyMs: 0 });
    await pausedAndGivenBack(env, "paused by the 401");
    expect(await onlyOrder(env)).toMatchObject({ key, generation: 0, status: "queued" });

    // The new key, resumed: the unclear attempt was made under the old API key, which this
    // one may not replay (the sandbox keeps its records per API key): nothing is sent.
    await work(env, { apiKey: "rotated-key-0987654321" });
    await resumeCampaign(env.ledger, CAMPAIGN);
    await eventually(async () => (await status(env)).failed_uncertain === 1, "failed_uncertain");
    expect(await onlyOrder(env)).toMatchObject({ key, error_type: "api_key_changed" });
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
    const money = Object.values(moneyOf(await env.ledger.campaigns.meta(CAMPAIGN)))[0]!;
    expect(money.spent).toMatch(/^0(\.0+)?$/);
    expect(money.uncertain).not.toMatch(/^0(\.0+)?$/);

    // A plain retry keeps refusing; --new-key without --include-uncertain leaves it alone.
    await retryCampaign(env.ledger, CAMPAIGN, { newKey: true, stores: fileStores(env.dataDir) });
    expect(await onlyOrder(env)).toMatchObject({ key, status: "failed_uncertain" });
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
  });

  it("a timeout, then 410 for a removed API version: paused, same key, replayed", async () => {
    const env = await envs.setup("version", { latencyMs: 400 });
    await importRows(env, 1);
    const { key } = await onlyOrder(env);
    await work(env, { requestTimeoutMs: 150 });
    await eventually(async () => (await onlyOrder(env)).unclear === "request_timeout", "marked");
    await work(env, { apiVersion: "2023-07-27" });
    await pausedAndGivenBack(env, "paused by the 410");
    expect(await onlyOrder(env)).toMatchObject({ key, generation: 0, status: "queued" });
    expect(await env.ledger.campaigns.pausedReason(CAMPAIGN)).toMatch(/^version_removed/);
    // Nothing for --new-key to move: the row is not failed_final.
    expect(
      await retryCampaign(env.ledger, CAMPAIGN, { newKey: true, stores: fileStores(env.dataDir) }),
    ).toMatchObject({ orders: 0 });

    env.sandbox.setFaults({ latencyMs: 0 });
    await work(env);
    await resumeCampaign(env.ledger, CAMPAIGN);
    await eventually(async () => (await status(env)).completed === 1, "completed");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
    expect((await onlyOrder(env)).unclear).toBeUndefined();
  });

  it("a 401 first, then the right key, then the ledger lost and the file imported again: 2 orders for 2 rows (after orders retry --any-api-key)", async () => {
    const env = await envs.setup("lost-after-401");
    await importRows(env, 2, "two.csv");
    // The key is rotated before the workers start: theirs is refused.
    const rightKey = "the-right-key-1234567";
    await control(env.sandbox, "/_sandbox/api-key", { api_key: rightKey });
    await work(env);
    await pausedAndGivenBack(env, "paused by the 401");
    for await (const [, order] of env.ledger.orders.all(CAMPAIGN))
      expect(order).toMatchObject({ generation: 0, status: "queued" });

    await work(env, { apiKey: rightKey });
    await resumeCampaign(env.ledger, CAMPAIGN);
    await eventually(async () => (await status(env)).completed === 2, "2 completed");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(2);

    await envs.stopWorkers();
    await cleanPrefix(env.redis, env.config.prefix);
    const client = new ApiClient({ baseUrl: env.sandbox.url, apiKey: rightKey });
    await importRows(env, 2, "two.csv", { ...depsOf(env), client });
    await work(env, { apiKey: rightKey });
    // The journal says these orders were recorded for the first API key, and it cannot tell
    // which key sent them: under another, nothing is sent until the operator has checked.
    await eventually(async () => (await status(env)).failed_uncertain === 2, "failed_uncertain");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(2);
    await retryCampaign(env.ledger, CAMPAIGN, { anyApiKey: true });
    await eventually(async () => (await status(env)).completed === 2, "2 completed again");
    expect(await status(env)).toMatchObject({ replayed: 2 });
    expect(await sandboxOrders(env.sandbox)).toHaveLength(2);
  });

  it("paid under one API key, the ledger lost, re-imported and sent under a rotated key: nothing sent again, failed_uncertain", async () => {
    const env = await envs.setup("lost-after-rotation");
    await importRows(env, 2, "two.csv");
    await work(env);
    await eventually(async () => (await status(env)).completed === 2, "2 completed");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(2);

    // The key is rotated and the ledger lost: the journal says which API key its orders were for.
    await envs.stopWorkers();
    const rotated = "rotated-key-5555555555";
    await control(env.sandbox, "/_sandbox/api-key", { api_key: rotated });
    await cleanPrefix(env.redis, env.config.prefix);
    const client = new ApiClient({ baseUrl: env.sandbox.url, apiKey: rotated });
    await importRows(env, 2, "two.csv", { ...depsOf(env), client });
    for await (const [, order] of env.ledger.orders.all(CAMPAIGN))
      expect(order).toMatchObject({ status: "queued", unclear: "ledger_lost" });
    await work(env, { apiKey: rotated });
    await eventually(async () => (await status(env)).failed_uncertain === 2, "failed_uncertain");
    expect(await sandboxOrders(env.sandbox)).toHaveLength(2);
  });

  it("a 401 before anything was sent, then cancel: cancelled, nothing may be spent", async () => {
    const env = await envs.setup("cancel-after-401");
    await importRows(env, 1);
    await control(env.sandbox, "/_sandbox/api-key", { api_key: "rotated-key-2222222222" });
    await work(env);
    await eventually(async () => (await status(env)).state === "paused", "paused by the 401");
    await envs.stopWorkers();
    await cancelCampaign(env.ledger, CAMPAIGN);
    expect(await status(env)).toMatchObject({ cancelled: 1, failed_uncertain: 0 });
    expect(await sandboxOrders(env.sandbox)).toHaveLength(0);
  });

  it("a worker dies after sending, its order is given back, then the campaign is cancelled: failed_uncertain, may be spent", async () => {
    const env = await envs.setup("given-back");
    await importRows(env, 1);
    await env.ledger.dispatch.handOut(10);
    // A worker's START and request; it dies before it records the answer.
    const start = await env.ledger.orders.start({
      campaign: CAMPAIGN,
      number: 1,
      patch: {},
      apiKeyFingerprint: env.client.keyFingerprint,
    });
    if (start.kind !== "started") throw new Error(`not started: ${start.kind}`);
    await env.client.createOrder(requestFromLedger(start.order, start.rows), {
      idempotencyKey: start.order.key,
      executionMode: "sync",
    });
    // Paused meanwhile: the job taken over gives the order back to the pending list.
    await pauseCampaign(env.ledger, CAMPAIGN);
    expect(
      await env.ledger.orders.start({
        campaign: CAMPAIGN,
        number: 1,
        patch: {},
        apiKeyFingerprint: env.client.keyFingerprint,
      }),
    ).toMatchObject({
      kind: "paused",
    });
    expect(await onlyOrder(env)).toMatchObject({ status: "queued", unclear: "interrupted" });
    // A plain retry touches nothing queued, and keeps the mark anyway.
    await retryCampaign(env.ledger, CAMPAIGN, {});
    await cancelCampaign(env.ledger, CAMPAIGN);
    expect(await status(env)).toMatchObject({ cancelled: 0, failed_uncertain: 1 });
    const money = Object.values(moneyOf(await env.ledger.campaigns.meta(CAMPAIGN)))[0]!;
    expect(money.uncertain).not.toMatch(/^0(\.0+)?$/);
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
  });
});
