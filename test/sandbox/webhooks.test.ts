import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxOptions } from "../../src/cli/commands/sandbox.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { ajv, webhookSchema } from "../helpers/openapi.js";
import { control, item, openCard, orderBody, postOrder, start, stats } from "../helpers/sandbox.js";
import { eventually } from "../helpers/wait-for.js";
import {
  newWebhookSecret,
  type ReceivedWebhook,
  startWebhookInbox,
  type WebhookInbox,
} from "../helpers/webhook-inbox.js";

let sandbox: Sandbox | undefined;
let inbox: WebhookInbox | undefined;

/** Checks a message's body against the OpenAPI `webhooks` schema of its type. */
function expectSpecShaped(message: ReceivedWebhook, type: "order.completion" | "product.update") {
  const validate = webhookSchema(type);
  expect(validate(message.json), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/** The Svix headers of a message, as the Standard Webhooks verifier reads them. */
function svixHeaders(message: ReceivedWebhook) {
  return {
    "webhook-id": message.id,
    "webhook-timestamp": message.timestamp,
    "webhook-signature": message.signature,
  };
}

/** POST /_sandbox/products/{code}. */
async function changeProduct(s: Sandbox, code: string, change: Record<string, unknown>) {
  return fetch(`${s.url}/_sandbox/products/${encodeURIComponent(code)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(change),
  });
}

afterEach(async () => {
  await sandbox?.close();
  await inbox?.close();
  sandbox = undefined;
  inbox = undefined;
});

async function setUp(options: Parameters<typeof start>[0] = {}) {
  inbox = await startWebhookInbox();
  const secret = newWebhookSecret();
  sandbox = await start({
    webhookUrl: inbox.url,
    webhookSecret: secret,
    asyncCompleteMs: 20,
    webhookRetryBaseMs: 10,
    ...options,
  });
  return { inbox, sandbox, secret };
}

function asyncOrder(s: Sandbox) {
  const product = openCard(s);
  const face = Number(product.gift_card?.denominations.minimum_value);
  return postOrder(s, orderBody("USD", [item(product.code, face)]), { mode: "async" });
}

describe("sandbox webhooks", () => {
  it("sends order.completion with Svix's headers, the order's basic details as the list shows them", async () => {
    const { inbox, sandbox, secret } = await setUp();
    const answer = await asyncOrder(sandbox);
    expect(answer.status).toBe(202);
    await eventually(async () => inbox.received.length === 1, "one webhook");
    const message = inbox.received[0]!;
    expect(message.id).toMatch(/^msg_/);
    expect(message.timestamp).toMatch(/^\d+$/);
    expect(message.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Object.keys(message.headers).filter((h) => h.startsWith("webhook-"))).toEqual([]);
    const verified = new Webhook(secret).verify(message.body, svixHeaders(message));
    expect(verified).toMatchObject({ id: answer.json.id, status: "COMPLETED" });
    expectSpecShaped(message, "order.completion");
    const lookup = await fetch(`${sandbox.url}/v2/order/${answer.json.id}`, {
      headers: { "X-Api-Key": "k" },
    });
    // OpenAPI CompletedOrderWebhook: CompletedOrderWithBasicDetails, no items, no metadata.
    const full = (await lookup.json()) as Record<string, unknown>;
    const basic = ["id", "status", "created_at", "completed_at", "description"];
    basic.push("payment_method", "currency", "total_price", "total_discount");
    expect(message.json).toEqual(
      Object.fromEntries(basic.filter((k) => k in full).map((k) => [k, full[k]])),
    );
    expect(message.json).not.toHaveProperty("items");
    expect(() =>
      new Webhook(newWebhookSecret()).verify(message.body, svixHeaders(message)),
    ).toThrow();
    const s = (await stats(sandbox)) as unknown as Record<string, unknown>;
    expect(s.order_lookups).toBe(1);
    expect(s.webhooks).toMatchObject({ messages: 1, delivered: 1, failed: 0 });
  });

  it("sends FAILED as {id, status} and refunds the order", async () => {
    const { inbox, sandbox } = await setUp({ asyncFailRate: 1 });
    const answer = await asyncOrder(sandbox);
    await eventually(async () => inbox.received.length === 1, "one webhook");
    expect(inbox.received[0]!.json).toEqual({ id: answer.json.id, status: "FAILED" });
    expectSpecShaped(inbox.received[0]!, "order.completion");
  });

  it("retries a non-2xx answer with backoff, same id, and counts the failures", async () => {
    const { inbox, sandbox } = await setUp();
    let refusals = 2;
    inbox.answer = () => (refusals-- > 0 ? 503 : 204);
    await asyncOrder(sandbox);
    await eventually(async () => inbox.received.length === 3, "three attempts");
    expect(new Set(inbox.received.map((m) => m.id)).size).toBe(1);
    await sandbox.webhooks!.idle();
    expect(sandbox.webhooks!.stats).toMatchObject({ delivered: 1, failed: 2, gave_up: 0 });
  });

  it("duplicates, drops and reorders on demand (counts and probabilities)", async () => {
    const { inbox, sandbox } = await setUp({ webhookFaults: { drop: 1 } });
    const first = await asyncOrder(sandbox); // dropped
    await eventually(async () => sandbox.webhooks!.stats.dropped === 1, "a drop");
    expect(inbox.received).toHaveLength(0);
    await control(sandbox, "/_sandbox/webhooks/faults", { duplicates: 1 });
    const second = await asyncOrder(sandbox); // duplicated
    await eventually(async () => inbox.received.length === 2, "a duplicate");
    expect(inbox.received[0]!.id).toBe(inbox.received[1]!.id);
    expect(inbox.received[0]!.json.id).toBe(second.json.id);
    sandbox.webhooks!.setFaults({ outOfOrder: 1 });
    const third = await asyncOrder(sandbox); // held back behind the fourth
    await eventually(async () => sandbox.webhooks!.stats.reordered === 1, "the third held back");
    const fourth = await asyncOrder(sandbox);
    await eventually(async () => inbox.received.length === 4, "two more");
    expect(inbox.received.slice(2).map((m) => m.json.id)).toEqual([fourth.json.id, third.json.id]);
    expect(sandbox.webhooks!.stats).toMatchObject({ dropped: 1, duplicated: 1, reordered: 1 });
    expect(first.status).toBe(202);
  });

  it("sends product.update when orderable, multiplier or denominations change", async () => {
    const { inbox, sandbox, secret } = await setUp();
    const product = openCard(sandbox);
    const { minimum_value, maximum_value } = product.gift_card!.denominations;
    const off = await changeProduct(sandbox, product.code, { is_orderable: false });
    expect(off.status).toBe(200);
    expect(await off.json()).toEqual({
      product_code: product.code,
      state: {
        price_multiplier: product.discount_multiplier,
        is_orderable: false,
        denominations: { type: "open", minimum_value, maximum_value, available_list: null },
      },
    });
    await eventually(async () => inbox.received.length === 1, "product.update");
    const first = inbox.received[0]!;
    expect(new Webhook(secret).verify(first.body, svixHeaders(first))).toBeDefined();
    expect(first.json).toMatchObject({
      product_code: product.code,
      old_state: { is_orderable: true, price_multiplier: product.discount_multiplier },
      new_state: { is_orderable: false, price_multiplier: product.discount_multiplier },
    });
    expect(Date.parse(first.json.timestamp)).toBeGreaterThan(0);
    expect(sandbox.state.catalog.get(product.code)?.is_orderable).toBe(false);

    await changeProduct(sandbox, product.code, { price_multiplier: "0.0500" });
    await changeProduct(sandbox, product.code, {
      denominations: { type: "fixed", available_list: ["10.00", "20.00"] },
    });
    // No change, and a change of `state` alone (not part of the message): nothing sent.
    await changeProduct(sandbox, product.code, { price_multiplier: "0.0500" });
    await control(sandbox, "/_sandbox/catalog", {
      mutate: { update: [{ code: product.code, state: "TEMPORARILY_DEGRADED" }] },
    });
    await eventually(async () => inbox.received.length === 3, "three product.update");
    await sandbox.webhooks!.idle();
    expect(inbox.received).toHaveLength(3);
    expect(inbox.received[1]!.json.new_state.price_multiplier).toBe("0.0500");
    expect(inbox.received[2]!.json.new_state.denominations).toEqual({
      type: "fixed",
      minimum_value,
      maximum_value,
      available_list: ["10.00", "20.00"],
    });
    for (const message of inbox.received) expectSpecShaped(message, "product.update");
    // The sandbox takes orders as the product now is.
    const refused = await postOrder(sandbox, orderBody("USD", [item(product.code, 10)]));
    expect(refused.status).toBe(400);
  });

  it("changes a payment product's denominations; refuses what it cannot change", async () => {
    const { inbox, sandbox } = await setUp();
    const payment = sandbox.state.catalog.products.find((p) => p.payment)!;
    const answer = await changeProduct(sandbox, payment.code, {
      denominations: { maximum_value: "42.00" },
    });
    expect(answer.status).toBe(200);
    await eventually(async () => inbox.received.length === 1, "product.update");
    expect(inbox.received[0]!.json.new_state.denominations).toEqual({
      minimum_value: payment.payment!.denominations.minimum_value,
      maximum_value: "42.00",
    });
    expectSpecShaped(inbox.received[0]!, "product.update");
    const subscription = sandbox.state.catalog.products.find((p) => p.subscription)!;
    const bad = [
      [subscription.code, { denominations: { maximum_value: "1.00" } }],
      [payment.code, { denominations: { type: "fixed" } }],
      [payment.code, { is_orderable: "no" }],
      [payment.code, { price_multiplier: 0.1 }],
      [payment.code, { state: "LIVE" }],
    ] as const;
    for (const [code, change] of bad) {
      const res = await changeProduct(sandbox, code, change);
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(await res.json()).toMatchObject({ type: "bad_request" });
    }
    expect((await changeProduct(sandbox, "NOPE-XX-0", { is_orderable: true })).status).toBe(404);
    await sandbox.webhooks!.idle();
    expect(inbox.received).toHaveLength(1);
  });
});

describe("sandbox --webhook-* flags", () => {
  const base = { port: "0", host: "127.0.0.1", products: "10", seed: "1", balance: [] };

  it("reads the webhook flags, a fault as a probability or a count", () => {
    const secret = newWebhookSecret();
    const options = sandboxOptions({
      ...base,
      webhookUrl: "http://127.0.0.1:8090/webhooks",
      webhookSecret: secret,
      webhookDuplicates: "0.2",
      webhookDrop: "3",
      webhookDelayMs: "50",
    });
    expect(options).toMatchObject({
      webhookUrl: "http://127.0.0.1:8090/webhooks",
      webhookSecret: secret,
      webhookFaults: { duplicates: 0.2, drop: 3, outOfOrder: 0, delayMs: 50 },
    });
  });

  it("refuses a bad flag in one line naming it, never echoing the secret", () => {
    const url = "http://127.0.0.1:8090/webhooks";
    expect(() => sandboxOptions({ ...base, webhookUrl: url })).toThrow(
      "--webhook-secret is required with --webhook-url",
    );
    expect(() => sandboxOptions({ ...base, webhookSecret: newWebhookSecret() })).toThrow(
      "--webhook-secret needs --webhook-url",
    );
    expect(() =>
      sandboxOptions({ ...base, webhookUrl: url, webhookSecret: "whsec_%%secret%%" }),
    ).toThrow(/^--webhook-secret must be whsec_ followed by a base64 key$/);
    expect(() =>
      sandboxOptions({
        ...base,
        webhookUrl: url,
        webhookSecret: newWebhookSecret(),
        webhookDrop: "1.5",
      }),
    ).toThrow(/^--webhook-drop must be a probability below 1/);
    expect(() => sandboxOptions({ ...base, webhookUrl: "ftp://x", webhookSecret: "s" })).toThrow(
      /^--webhook-url must be an http\(s\) URL/,
    );
  });
});
