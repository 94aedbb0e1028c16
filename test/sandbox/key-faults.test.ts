// The sandbox's idempotency model as src/sandbox/README.md ("Idempotency") states it: what is
// refused before the key is read leaves nothing under it, what is refused after is replayed,
// a 5xx after the order was made replays the order, and replays are scoped to the API key.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrderAttempt, Sandbox } from "../../src/sandbox/index.js";
import {
  call,
  control,
  item,
  newKey,
  openCard,
  orderBody,
  postOrder,
  sandboxOrders,
  start,
  validOrder,
} from "../helpers/sandbox.js";

const KEY = "test-key";

/** POST /v2/order under the API key `apiKey` (postOrder always sends KEY). */
function postAs(sandbox: Sandbox, apiKey: string, body: unknown, key: string) {
  return call(sandbox, "/v2/order", {
    method: "POST",
    key: apiKey,
    headers: { "X-Idempotency-Key": key },
    body,
  });
}

describe("what the service records under an idempotency key", () => {
  let sandbox: Sandbox;
  const attempts: OrderAttempt[] = [];
  beforeAll(async () => {
    sandbox = await start({ apiKey: KEY, onOrderAttempt: (a) => attempts.push(a) });
  });
  afterAll(() => sandbox.close());
  beforeEach(() => {
    sandbox.reset();
    sandbox.setApiKey(KEY);
    sandbox.setFaults({ failRate: 0, failAfterRate: 0, refuseEmails: [], orderRateLimit: 300 });
    attempts.length = 0;
  });

  it("refusals before the key is read record nothing: the same key later makes the order", async () => {
    const key = newKey("before");
    const body = validOrder(sandbox);
    const refusals = [
      () => postAs(sandbox, "wrong", body, key),
      () => postOrder(sandbox, body, { key, headers: { "X-Api-Version": "2023-07-27" } }),
      () => postOrder(sandbox, body, { key, headers: { "X-Api-Version": "2020-01-01" } }),
    ];
    const statuses = [];
    for (const refuse of refusals) statuses.push((await refuse()).status);
    sandbox.setFaults({ failRate: 1 });
    statuses.push((await postOrder(sandbox, body, { key })).status);
    sandbox.setFaults({ failRate: 0, orderRateLimit: 1 });
    await postOrder(sandbox, validOrder(sandbox));
    statuses.push((await postOrder(sandbox, body, { key })).status);
    expect(statuses).toEqual([401, 410, 400, 500, 429]);
    sandbox.reset();
    sandbox.setFaults({ orderRateLimit: 300 });
    expect((await postOrder(sandbox, body, { key })).status).toBe(202);
  });

  it("refuse_emails: 422 naming the item, replayed for the same key even once lifted", async () => {
    const card = openCard(sandbox);
    const face = Number(card.gift_card?.denominations.minimum_value);
    const body = orderBody("USD", [
      item(card.code, face, "a@example.com"),
      item(card.code, face, "b@example.com"),
    ]);
    await control(sandbox, "/_sandbox/faults", { refuse_emails: ["b@example.com"] });
    const key = newKey("refused");
    const refused = await postOrder(sandbox, body, { key });
    expect(refused.status).toBe(422);
    expect(refused.json.details.map((d: { location: string[] }) => d.location)).toEqual([
      ["body", "items", "1", "distribution_method", "email_address"],
    ]);
    sandbox.setFaults({ refuseEmails: [] });
    const again = await postOrder(sandbox, body, { key });
    expect([again.status, again.headers.get("x-sandbox-replayed")]).toEqual([422, "true"]);
    expect((await postOrder(sandbox, body)).status).toBe(202);
  });

  it("fail_after_rate: the order is made, the answer is a 500 or 504; the key replays the order", async () => {
    for (const status of [500, 504] as const) {
      await control(sandbox, "/_sandbox/faults", { fail_after_rate: 1, fail_after_status: status });
      const key = newKey(`after${status}`);
      const body = validOrder(sandbox);
      const failed = await postOrder(sandbox, body, { key, mode: "sync" });
      expect([failed.status, failed.json.type]).toEqual([
        status,
        status === 504 ? "timeout" : "internal_server_error",
      ]);
      sandbox.setFaults({ failAfterRate: 0 });
      const replay = await postOrder(sandbox, body, { key, mode: "sync" });
      expect([replay.status, replay.headers.get("x-sandbox-replayed")]).toEqual([200, "true"]);
      const made = (await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key);
      expect(made.map((o) => o.id)).toEqual([replay.json.id]);
    }
    const bad = await call(sandbox, "/_sandbox/faults", {
      method: "POST",
      body: { fail_after_status: 502 },
    });
    expect([bad.status, bad.json.message]).toEqual([400, "fail_after_status must be 500 or 504"]);
  });

  it("a key rotation: the old API key is refused, and its orders are not replayed under the new one", async () => {
    const key = newKey("rotated");
    const body = validOrder(sandbox);
    expect((await postOrder(sandbox, body, { key })).status).toBe(202);
    expect(await control(sandbox, "/_sandbox/api-key", { api_key: "key-2" })).toEqual({
      api_key_required: true,
    });
    const old = await postOrder(sandbox, body, { key });
    expect([old.status, old.json.type]).toEqual([401, "invalid_api_key"]);
    const rotated = await postAs(sandbox, "key-2", body, key);
    expect([rotated.status, rotated.headers.get("x-sandbox-replayed")]).toEqual([202, null]);
    expect((await sandboxOrders(sandbox)).filter((o) => o.idempotency_key === key)).toHaveLength(2);
    await control(sandbox, "/_sandbox/api-key", { api_key: null });
    expect((await call(sandbox, "/v2/ping", { key: "anything" })).status).toBe(200);
  });

  it("a rotation can leave the old key forbidden: 403 before the key is read", async () => {
    await control(sandbox, "/_sandbox/api-key", { api_key: "key-2", old_key: "forbidden" });
    const key = newKey("forbidden");
    const body = validOrder(sandbox);
    const old = await postAs(sandbox, KEY, body, key);
    expect([old.status, old.json.type]).toEqual([403, "forbidden"]);
    expect((await postAs(sandbox, "other", body, key)).json.type).toBe("invalid_api_key");
    expect((await postAs(sandbox, "key-2", body, key)).status).toBe(202);
    const wrong = await call(sandbox, "/_sandbox/api-key", {
      method: "POST",
      body: { api_key: "key-3", old_key: "gone" },
    });
    expect(wrong.status).toBe(400);
  });

  it("tells onOrderAttempt how each order request ended", async () => {
    const key = newKey("traced");
    await postOrder(sandbox, validOrder(sandbox), { key });
    await postOrder(sandbox, validOrder(sandbox), { key });
    await postOrder(sandbox, {}, { key: newKey("bad") });
    expect(attempts.map((a) => [a.status, a.errorType, a.replayed])).toEqual([
      [202, undefined, false],
      [202, undefined, true],
      [422, "validation_error", false],
    ]);
    expect(attempts[0]?.idempotencyKey).toBe(key);
  });
});
