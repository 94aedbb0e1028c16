import type { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { ProductOverrides } from "../../src/catalog/product-overrides.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
import { webhookSecretFrom } from "../../src/webhooks/webhook-secret.js";
import { ledgerOrder, ledgerRow, recordSubmitted } from "../helpers/ledger-fixtures.js";
import { eventually } from "../helpers/wait-for.js";
import {
  messagesCounted,
  postSigned,
  type WebhookEnv,
  webhookEnv,
} from "../helpers/webhook-env.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

describe("the webhook receiver", () => {
  let w: WebhookEnv | undefined;
  afterEach(async () => {
    await w?.dispose();
    w = undefined;
  });

  /** A product.update as the OpenAPI defines it: `code` made orderable or not at `at`. */
  function update(code: string, orderable: boolean, at = new Date()) {
    return {
      product_code: code,
      old_state: { price_multiplier: "0.05", is_orderable: !orderable },
      new_state: { price_multiplier: "0.05", is_orderable: orderable },
      timestamp: at.toISOString(),
    };
  }

  it("refuses forged, stale and unsigned messages with 401 and changes nothing", async () => {
    w = await webhookEnv("wh-forged");
    const { receiver, secret, env, registry } = w;
    const body = update(Object.keys(env.index.entries)[0]!, false);
    const forged = await postSigned(receiver.url, newWebhookSecret(), body);
    expect(forged.status).toBe(401);
    const stale = await postSigned(receiver.url, secret, body, {
      at: new Date(Date.now() - 10 * 60_000),
    });
    expect(stale.status).toBe(401);
    const unsigned = await postSigned(receiver.url, secret, body, { signature: "" });
    expect(unsigned.status).toBe(401);
    // A body changed after signing: the signature is of other bytes.
    const id = "msg_tampered";
    const signed = await postSigned(receiver.url, secret, body, { id });
    expect(signed.status).toBe(200);
    const tampered = await fetch(receiver.url, {
      method: "POST",
      headers: {
        "webhook-id": "msg_other",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,AAAA",
      },
      body: JSON.stringify({ ...body, new_state: { ...body.new_state, is_orderable: true } }),
    });
    expect(tampered.status).toBe(401);
    expect(await messagesCounted(registry, "unknown", "unauthorized")).toBe(4);
    expect(await messagesCounted(registry, "product.update", "applied")).toBe(1);
  });

  it("answers 400 to a signed body it cannot read, and applies nothing", async () => {
    w = await webhookEnv("wh-unreadable");
    const at = new Date();
    const text = "not json";
    const res = await fetch(w.receiver.url, {
      method: "POST",
      headers: {
        "webhook-id": "msg_text",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(w.secret).sign("msg_text", at, text),
      },
      body: text,
    });
    expect(res.status).toBe(400);
    const odd = await postSigned(w.receiver.url, w.secret, { hello: "world" });
    expect(odd).toEqual({ status: 400, result: "bad_request" });
    expect(await messagesCounted(w.registry, "unknown", "bad_request")).toBe(2);
  });

  it("applies a replayed webhook-id once", async () => {
    w = await webhookEnv("wh-replay");
    const { receiver, secret, env, registry } = w;
    const code = Object.keys(env.index.entries)[0]!;
    const first = await postSigned(receiver.url, secret, update(code, false), { id: "msg_once" });
    expect(first).toEqual({ status: 200, result: "applied" });
    // Same id, later and different body (a replay attack or the service's retry): not applied.
    const again = await postSigned(
      receiver.url,
      secret,
      update(code, true, new Date(Date.now() + 1000)),
      { id: "msg_once" },
    );
    expect(again).toEqual({ status: 200, result: "duplicate" });
    const overrides = new ProductOverrides(env.redis, env.config.prefix);
    const index = await loadCurrentIndex(env.dataDir, overrides);
    expect(index!.entries[code]!.is_orderable).toBe(false);
    expect(await messagesCounted(registry, "product.update", "duplicate")).toBe(1);
  });

  it("a FAILED order.completion of an order id it does not know is asked again once, then 2xx and counted", async () => {
    w = await webhookEnv("wh-unknown");
    const message = { id: "O-NOTOURS", status: "FAILED" };
    // It may be ours a moment before the worker indexed it: the service's next try tells.
    const first = await postSigned(w.receiver.url, w.secret, message, { id: "msg_notours" });
    expect(first).toEqual({ status: 409, result: "not_yet" });
    const answer = await postSigned(w.receiver.url, w.secret, message, { id: "msg_notours" });
    expect(answer).toEqual({ status: 200, result: "unknown_order" });
    expect(await messagesCounted(w.registry, "order.completion", "unknown_order")).toBe(1);
    expect(await new OrderIndex(w.env.redis, w.env.config.prefix).size()).toBe(0);
  });

  it("a message that beats the worker's `submitted` is 409 (the service sends it again), then applied", async () => {
    w = await webhookEnv("wh-not-yet");
    const { ledger } = w.env;
    await ledger.orders.record("c", [
      { order: { ...ledgerOrder("c", ["a"]), status: "in_flight" }, rows: [["a", ledgerRow(2)]] },
    ]);
    // The worker indexes the order id just before its `submitted` transition.
    await new OrderIndex(w.env.redis, w.env.config.prefix).remember("O-EARLY", "c", 1);
    const message = { id: "O-EARLY", status: "FAILED" };
    const early = await postSigned(w.receiver.url, w.secret, message, { id: "msg_early" });
    expect(early).toEqual({ status: 409, result: "not_yet" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "in_flight" });
    await ledger.orders.transition({
      campaign: "c",
      number: 1,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: "O-EARLY" },
      follow: { at: Date.now() + 60_000 },
    });
    // The service's retry carries the same webhook-id: a 409 did not use it up.
    const again = await postSigned(w.receiver.url, w.secret, message, { id: "msg_early" });
    expect(again).toEqual({ status: 200, result: "applied" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({
      status: "failed_final",
      error_type: "order_failed",
    });
    expect(await ledger.follows.count()).toBe(0);
  });

  /**
   * Order 1 of campaign "c" submitted under `orderId` (the worker's index entry written first)
   * and followed a minute from now.
   */
  async function submittedOrder(env: WebhookEnv["env"], orderId: string): Promise<OrderIndex> {
    const index = new OrderIndex(env.redis, env.config.prefix);
    await recordSubmitted(env.ledger, index, orderId);
    return index;
  }

  /** A COMPLETED message's body: the order as GET /v2/order/{id} shows it. */
  function completedBody(id: string) {
    return {
      id,
      status: "COMPLETED",
      created_at: new Date().toISOString(),
      items: [{ id: `E-${id}`, payout: { status: "ACTIVE" } }],
    };
  }

  it("an order status it does not know ends the order failed_uncertain (an order may exist), naming the status", async () => {
    w = await webhookEnv("wh-odd-status");
    const { ledger } = w.env;
    const index = await submittedOrder(w.env, "O-ODD");
    // PROCESSING is no end: refused, nothing changed.
    const processing = await postSigned(w.receiver.url, w.secret, {
      id: "O-ODD",
      status: "PROCESSING",
    });
    expect(processing).toEqual({ status: 400, result: "bad_request" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "submitted" });
    const odd = await postSigned(w.receiver.url, w.secret, { id: "O-ODD", status: "REFUNDED" });
    expect(odd).toEqual({ status: 200, result: "applied" });
    const order = await ledger.orders.getOrder("c", 1);
    expect(order).toMatchObject({
      status: "failed_uncertain",
      order_id: "O-ODD",
      error_type: "unknown_order_status",
    });
    expect(order?.error_message).toMatch(/order status "REFUNDED".*does not know.*may exist/);
    const counts = await ledger.campaigns.counts("c");
    expect(counts).toMatchObject({ failed_uncertain: 1, failed_final: 0, submitted: 0 });
    expect(await ledger.follows.count()).toBe(0);
    expect(await index.size()).toBe(0);
    expect(await messagesCounted(w.registry, "order.completion", "applied")).toBe(1);
  });

  it("ends an order only when the ledger holds the message's order id; any other is acknowledged and changes nothing", async () => {
    w = await webhookEnv("wh-mismatch");
    const { ledger } = w.env;
    const index = await submittedOrder(w.env, "O-LEDGER");
    // An entry naming the same order under another order id (stale, or written by mistake).
    await index.remember("O-STALE", "c", 1);
    const failed = await postSigned(
      w.receiver.url,
      w.secret,
      { id: "O-STALE", status: "FAILED" },
      { id: "msg_stale_failed" },
    );
    expect(failed).toEqual({ status: 200, result: "mismatch" });
    const completed = await postSigned(w.receiver.url, w.secret, completedBody("O-STALE"));
    expect(completed).toEqual({ status: 200, result: "mismatch" });
    const odd = await postSigned(w.receiver.url, w.secret, { id: "O-STALE", status: "REFUNDED" });
    expect(odd).toEqual({ status: 200, result: "mismatch" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({
      status: "submitted",
      order_id: "O-LEDGER",
    });
    expect(await ledger.campaigns.counts("c")).toMatchObject({
      submitted: 1,
      completed: 0,
      failed_final: 0,
    });
    expect(await ledger.follows.count()).toBe(1);
    expect(await index.size()).toBe(2);
    // Acknowledged: the service's retry of it is a duplicate.
    const again = await postSigned(
      w.receiver.url,
      w.secret,
      { id: "O-STALE", status: "FAILED" },
      { id: "msg_stale_failed" },
    );
    expect(again).toEqual({ status: 200, result: "duplicate" });
    expect(await messagesCounted(w.registry, "order.completion", "mismatch")).toBe(3);
    // The ledger's own order id ends it.
    const own = await postSigned(w.receiver.url, w.secret, completedBody("O-LEDGER"));
    expect(own).toEqual({ status: 200, result: "applied" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({
      status: "completed",
      order_id: "O-LEDGER",
      item_ids: ["E-O-LEDGER"],
    });
    // Ended now: the other id is still not this order's (no already_ended, nothing forgotten).
    const late = await postSigned(w.receiver.url, w.secret, { id: "O-STALE", status: "FAILED" });
    expect(late).toEqual({ status: 200, result: "mismatch" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "completed" });
    expect(await index.find("O-STALE")).toEqual({ campaign: "c", number: 1 });
    expect(await index.find("O-LEDGER")).toBeUndefined();
  });

  it("passes every key its scripts touch in KEYS (Redis's rule; proxies and Dragonfly hold to it)", async () => {
    w = await webhookEnv("wh-keys");
    const { prefix } = w.env.config;
    await submittedOrder(w.env, "O-KEYS");
    // MONITOR shows a script's call, then each command it runs (source "lua"): nothing runs
    // between them, so each lua command is the script's shown last.
    const monitor = await monitorOf(w.env.redis);
    const touched: { declared: string[]; key: string; command: string }[] = [];
    let declared: string[] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      const command = args[0]?.toLowerCase() ?? "";
      if (source !== "lua") {
        declared =
          command === "evalsha" || command === "eval" ? args.slice(3, 3 + Number(args[2])) : [];
        return;
      }
      if (args[1]?.startsWith(`${prefix}:`)) touched.push({ declared, key: args[1], command });
    });
    try {
      const answer = await postSigned(w.receiver.url, w.secret, { id: "O-KEYS", status: "FAILED" });
      expect(answer).toEqual({ status: 200, result: "applied" });
      // The TRANSITION unfollows the order last: its ZREM ends what the message made run.
      await eventually(
        async () => touched.some((t) => t.command === "zrem"),
        "the scripts' commands to be seen",
        5000,
      );
    } finally {
      monitor.disconnect();
    }
    expect(touched.some((t) => t.key === `${prefix}:order-ids`)).toBe(true);
    expect(touched.filter((t) => !t.declared.includes(t.key))).toEqual([]);
  });

  it("GIFTJOBS_WEBHOOK_SECRET missing or malformed is one line naming it", () => {
    expect(() => webhookSecretFrom({})).toThrow(/^GIFTJOBS_WEBHOOK_SECRET: is not set/);
    expect(() => webhookSecretFrom({ GIFTJOBS_WEBHOOK_SECRET: "whsec_short" })).toThrow(
      /^GIFTJOBS_WEBHOOK_SECRET: must be whsec_/,
    );
    expect(() => webhookSecretFrom({ GIFTJOBS_WEBHOOK_SECRET: "sk-abc" })).toThrow(
      /GIFTJOBS_WEBHOOK_SECRET/,
    );
  });
});

/**
 * A connection in MONITOR mode. ioredis's `monitor()` fails now and then on a busy Redis (the
 * suite's other files): lines that come in the same read as MONITOR's OK, before ioredis counts
 * the connection as monitoring, are taken for replies ("Command queue state error"). Such a
 * connection is closed, its later errors ignored, and MONITOR asked again on a new one.
 */
async function monitorOf(redis: Redis, tries = 5): Promise<Redis> {
  for (let attempt = 1; ; attempt++) {
    const monitor = redis.duplicate({ monitor: true, lazyConnect: true });
    const failed = new Promise<Error>((resolve) => monitor.on("error", resolve));
    const monitoring = new Promise<void>((resolve) => monitor.once("monitoring", resolve));
    await monitor.connect().catch(() => {});
    const error = await Promise.race([monitoring.then(() => undefined), failed]);
    if (error === undefined) return monitor;
    monitor.disconnect();
    if (attempt === tries) throw error;
  }
}
