import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { ajv, responseSchema } from "../helpers/openapi.js";
import { type Answer, call, control, postOrder, start, validOrder } from "../helpers/sandbox.js";

function expectValid(answer: Answer, path: string, method: string) {
  const validate = responseSchema(path, method, answer.status);
  expect(
    validate(answer.json),
    `${path} ${answer.status}: ${ajv.errorsText(validate.errors)}`,
  ).toBe(true);
}

/** Posts `n` sync orders one after the other; returns their ids, oldest first. */
async function makeOrders(sandbox: Sandbox, n: number, mode = "sync"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await postOrder(sandbox, validOrder(sandbox), { mode });
    ids.push(answer.json.id);
  }
  return ids;
}

describe("sandbox: GET /v2/order and the payout controls", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start({ asyncCompleteMs: 60_000 });
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.reset());

  it("pages the orders newest first with after cursors, to an empty page; valid per OpenAPI", async () => {
    const made = await makeOrders(sandbox, 7);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await call(sandbox, `/v2/order?limit=3${after ? `&after=${after}` : ""}`);
      expectValid(page, "/order", "get");
      expect(page.json.pagination.page.limit).toBe(3);
      if (page.json.items.length === 0) break;
      seen.push(...page.json.items.map((o: { id: string }) => o.id));
      after = page.json.pagination.cursors.after;
    }
    expect(seen).toEqual([...made].reverse());
    // The list shows basic details: no items, no metadata.
    const first = (await call(sandbox, "/v2/order")).json.items[0];
    expect(first).toMatchObject({ id: made[6], status: "COMPLETED", currency: "USD" });
    expect(first.items).toBeUndefined();
    expect(first.created_at).toEqual(expect.any(String));
  });

  it("before pages back to newer orders; a processing order is an IncompleteOrder", async () => {
    const made = await makeOrders(sandbox, 5);
    const [processing] = await makeOrders(sandbox, 1, "async");
    const older = await call(sandbox, `/v2/order?limit=2&after=${made[2]}`);
    expect(older.json.items.map((o: { id: string }) => o.id)).toEqual([made[1], made[0]]);
    const newer = await call(sandbox, `/v2/order?limit=2&before=${made[2]}`);
    expectValid(newer, "/order", "get");
    expect(newer.json.items.map((o: { id: string }) => o.id)).toEqual([made[4], made[3]]);
    const top = await call(sandbox, "/v2/order?limit=1");
    expectValid(top, "/order", "get");
    expect(top.json.items[0]).toEqual({
      id: processing,
      status: "PROCESSING",
      message: expect.any(String),
    });
  });

  it("refuses a bad limit and both cursors at once", async () => {
    for (const query of ["limit=0", "limit=501", "limit=x", "after=O-1&before=O-2"]) {
      const answer = await call(sandbox, `/v2/order?${query}`);
      expect([answer.status, answer.json.type], query).toEqual([400, "pagination_error"]);
    }
    expect((await call(sandbox, "/v2/order", { key: null })).status).toBe(401);
  });

  it("claims and expires payouts; forgets an order", async () => {
    const [a, b] = await makeOrders(sandbox, 2);
    const itemId = (await call(sandbox, `/v2/order/${a}`)).json.items[0].id;
    const claimed = (await control(sandbox, "/_sandbox/payouts", {
      item_id: itemId,
      status: "CLAIMED",
    })) as { items: { id: string; status: string; url?: string }[] };
    expect(claimed.items).toEqual([expect.objectContaining({ id: itemId, status: "CLAIMED" })]);
    expect(claimed.items[0]!.url).toBeUndefined();
    const lookup = await call(sandbox, `/v2/order/${a}`);
    expectValid(lookup, "/order/{id}", "get");
    expect(lookup.json.items[0].payout.status).toBe("CLAIMED");

    await control(sandbox, "/_sandbox/payouts", {
      order_id: b,
      status: "EXPIRED",
      expiry_date: "2020-01-01T00:00:00Z",
    });
    const expired = (await call(sandbox, `/v2/order/${b}`)).json.items[0].payout;
    expect(expired).toMatchObject({ status: "EXPIRED", expiry_date: "2020-01-01T00:00:00.000Z" });

    await expect(
      control(sandbox, "/_sandbox/payouts", { item_id: itemId, status: "GONE" }),
    ).rejects.toThrow(/400/);
    await expect(control(sandbox, "/_sandbox/payouts", { status: "CLAIMED" })).rejects.toThrow(
      /400/,
    );

    await control(sandbox, "/_sandbox/orders/forget", { order_id: a });
    expect((await call(sandbox, `/v2/order/${a}`)).status).toBe(404);
    const list = await call(sandbox, "/v2/order");
    expect(list.json.items.map((o: { id: string }) => o.id)).toEqual([b]);
  });
});
