// The receiver's verification as the service signs through Svix: `svix-*` headers (and the
// Standard Webhooks `webhook-*` ones), several signatures in one header, forged ones refused,
// and the key in no log line or answer.
import { Writable } from "node:stream";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { createLogger, type Logger, silentLogger } from "../../src/log.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
import { type RunningReceiver, startWebhookReceiver } from "../../src/webhooks/webhook-receiver.js";
import { recordSubmitted } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";
import { postSigned } from "../helpers/webhook-env.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

const redis = useRedisPrefix("wh-sig");

let receiver: RunningReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function startReceiver(secret: string, log: Logger = silentLogger): Promise<string> {
  receiver = await startWebhookReceiver({
    redis: redis.redis,
    prefix: redis.prefix,
    secret,
    log,
    port: 0,
  });
  return receiver.url;
}

/** Order 1 of campaign "c" submitted under `orderId`, its order id indexed. */
async function submittedOrder(orderId: string): Promise<Ledger> {
  const ledger = new Ledger(redis.redis, redis.prefix);
  await recordSubmitted(ledger, new OrderIndex(redis.redis, redis.prefix), orderId);
  return ledger;
}

/** A COMPLETED order.completion: the order as GET /v2/order/{id} shows it. */
function completed(id: string) {
  return {
    id,
    status: "COMPLETED",
    created_at: new Date().toISOString(),
    completed_at: new Date().toISOString(),
    payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
    currency: "USD",
    total_price: "9.50",
    total_discount: "0.50",
    items: [{ id: `E-${id}`, payout: { status: "ACTIVE" } }],
  };
}

/** A signature of `body` under `secret`, as Svix writes one (`v1,<base64>`). */
function signature(secret: string, id: string, at: Date, body: unknown): string {
  return new Webhook(secret).sign(id, at, JSON.stringify(body));
}

describe("the receiver's verification", () => {
  it("applies an order.completion signed as Svix sends it (svix-* headers)", async () => {
    const secret = newWebhookSecret();
    const url = await startReceiver(secret);
    const ledger = await submittedOrder("O-SVIX");
    const answer = await postSigned(url, secret, completed("O-SVIX"), { scheme: "svix" });
    expect(answer).toEqual({ status: 200, result: "applied" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({
      status: "completed",
      item_ids: ["E-O-SVIX"],
    });
  });

  it("applies one signed under the Standard Webhooks names (webhook-*)", async () => {
    const secret = newWebhookSecret();
    const url = await startReceiver(secret);
    const ledger = await submittedOrder("O-STD");
    const message = { id: "O-STD", status: "FAILED" };
    const answer = await postSigned(url, secret, message, { scheme: "webhook" });
    expect(answer).toEqual({ status: 200, result: "applied" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "failed_final" });
  });

  it("applies one with several signatures of which one is valid (rotation)", async () => {
    const secret = newWebhookSecret();
    const url = await startReceiver(secret);
    const ledger = await submittedOrder("O-ROT");
    const body = completed("O-ROT");
    const id = "msg_rotated";
    const at = new Date();
    const old = signature(newWebhookSecret(), id, at, body);
    const current = signature(secret, id, at, body);
    const answer = await postSigned(url, secret, body, { id, at, signature: `${old} ${current}` });
    expect(answer).toEqual({ status: 200, result: "applied" });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "completed" });
    // The valid one first works as well (a retry of the same message: a duplicate by then).
    const again = await postSigned(url, secret, body, { id, at, signature: `${current} ${old}` });
    expect(again).toEqual({ status: 200, result: "duplicate" });
  });

  it("refuses forged messages with 401 under either names, and changes nothing", async () => {
    const secret = newWebhookSecret();
    const url = await startReceiver(secret);
    const ledger = await submittedOrder("O-FORGED");
    const body = { id: "O-FORGED", status: "FAILED" };
    const other = newWebhookSecret();
    for (const scheme of ["svix", "webhook"] as const) {
      // Signed under another key.
      expect(await postSigned(url, other, body, { scheme })).toEqual({
        status: 401,
        result: "unauthorized",
      });
      // Several signatures, none valid; an unknown version; none at all.
      const id = `msg_forged_${scheme}`;
      const at = new Date();
      const third = newWebhookSecret();
      const two = `${signature(other, id, at, body)} ${signature(third, id, at, body)}`;
      expect((await postSigned(url, secret, body, { id, at, scheme, signature: two })).status).toBe(
        401,
      );
      const v2 = signature(secret, id, at, body).replace(/^v1,/, "v2,");
      expect((await postSigned(url, secret, body, { id, at, scheme, signature: v2 })).status).toBe(
        401,
      );
      expect((await postSigned(url, secret, body, { scheme, signature: "" })).status).toBe(401);
      // Too old and too new (the tolerance is 5 minutes either way).
      const old = new Date(Date.now() - 6 * 60_000);
      expect((await postSigned(url, secret, body, { scheme, at: old })).status).toBe(401);
      const ahead = new Date(Date.now() + 6 * 60_000);
      expect((await postSigned(url, secret, body, { scheme, at: ahead })).status).toBe(401);
    }
    // The two sets are not mixed: svix-* present, a valid webhook-signature beside a forged
    // svix-signature does not count.
    const id = "msg_mixed";
    const at = new Date();
    const mixed = await postSigned(url, other, body, {
      id,
      at,
      headers: { "webhook-signature": signature(secret, id, at, body) },
    });
    expect(mixed.status).toBe(401);
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "submitted" });
  });

  it("never shows the key: no log line and no answer holds the secret or its key", async () => {
    const secret = newWebhookSecret();
    const key = secret.slice("whsec_".length);
    let logged = "";
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    const url = await startReceiver(
      secret,
      createLogger({ destination, pretty: false, level: "debug" }),
    );
    await submittedOrder("O-QUIET");
    const answers: string[] = [];
    const bodies = [
      { id: "O-QUIET", status: "FAILED" },
      { product_code: "X", new_state: "LIVE" },
      { hello: "world" },
    ];
    for (const body of bodies) {
      for (const sign of [secret, newWebhookSecret()]) {
        const res = await fetch(url, {
          method: "POST",
          headers: {
            "svix-id": "msg_quiet",
            "svix-timestamp": String(Math.floor(Date.now() / 1000)),
            "svix-signature": signature(sign, "msg_quiet", new Date(), body),
          },
          body: JSON.stringify(body),
        });
        answers.push(await res.text());
      }
    }
    expect(answers.join("\n")).not.toContain(key);
    expect(logged).not.toContain(key);
    expect(logged).not.toContain(secret);
  });
});
