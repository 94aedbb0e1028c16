import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiKeyId, type Product, type Sandbox } from "../../src/sandbox/index.js";
import {
  call,
  findProduct,
  isLiveOrderable,
  item,
  KEY,
  newKey,
  openCard,
  orderBody,
  postOrder,
  start,
  validOrder,
} from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait-for.js";

describe("auth and versions", () => {
  let sandbox: Sandbox;
  let keyed: Sandbox;
  beforeAll(async () => {
    sandbox = await start();
    keyed = await start({ apiKey: "the-only-key" });
  });
  afterAll(async () => {
    await sandbox.close();
    await keyed.close();
  });

  it("answers ping with any non-empty key, 401 unauthorized without one", async () => {
    expect((await call(sandbox, "/v2/ping")).json).toEqual({ message: "pong" });
    for (const key of [null, ""]) {
      const res = await call(sandbox, "/v2/ping", { key });
      expect(res.status).toBe(401);
      expect(res.json.type).toBe("unauthorized");
    }
  });

  it("accepts only the configured key: invalid_api_key otherwise", async () => {
    const wrong = await call(keyed, "/v2/product", { key: "another" });
    expect(wrong.status).toBe(401);
    expect(wrong.json.type).toBe("invalid_api_key");
    const order = await postOrder(keyed, {}, { headers: { "X-Api-Key": "another" } });
    expect(order.json.type).toBe("invalid_api_key");
    expect((await call(keyed, "/v2/ping", { key: "the-only-key" })).status).toBe(200);
  });

  it("echoes X-Api-Version; 400 invalid_version, 410 version_removed", async () => {
    const latest = await call(sandbox, "/v2/ping", { headers: { "X-Api-Version": "2024-02-05" } });
    expect(latest.headers.get("x-api-version")).toBe("2024-02-05");
    expect((await call(sandbox, "/v2/ping")).headers.get("x-api-version")).toBe("2024-02-05");
    for (const version of ["2023-07-27", "2023-01-16"]) {
      const res = await call(sandbox, "/v2/ping", { headers: { "X-Api-Version": version } });
      expect(res.status).toBe(410);
      expect(res.json.type).toBe("version_removed");
    }
    for (const version of ["2020-01-01", "latest"]) {
      const res = await call(sandbox, "/v2/product", { headers: { "X-Api-Version": version } });
      expect(res.status).toBe(400);
      expect(res.json.type).toBe("invalid_version");
    }
  });

  it("answers 404 not_found for unknown routes and orders", async () => {
    expect((await call(sandbox, "/v2/nothing")).json.type).toBe("not_found");
    const order = await call(sandbox, "/v2/order/O-UNKNOWN");
    expect(order.status).toBe(404);
    expect(order.json.type).toBe("not_found");
  });
});

describe("POST /v2/order", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start({ products: 600, balances: { GBP: "30.00" } });
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.reset());

  it("creates a sync order with every field, priced after the discount", async () => {
    const product = openCard(sandbox);
    const body = orderBody("USD", [item(product.code, 100)], {
      description: "campaign A",
      metadata: { row: "7" },
    });
    const res = await postOrder(sandbox, body, { mode: "sync" });
    expect(res.status).toBe(200);
    const order = res.json;
    expect(order.id).toMatch(/^O-[0-9A-Z]{26}$/);
    expect(order.status).toBe("COMPLETED");
    expect(order.created_at).toMatch(/Z$/);
    expect(order.completed_at).toMatch(/Z$/);
    expect(order.description).toBe("campaign A");
    expect(order.metadata).toEqual({ row: "7" });
    expect(order.payment_method).toEqual({ type: "ACCOUNT_BALANCE", currency: "USD" });
    const discount = Math.round(100 * Number(product.discount_multiplier) * 100) / 100;
    expect(order.total_price).toBe((100 - discount).toFixed(2));
    expect(order.total_discount).toBe(discount.toFixed(2));
    expect(order.transaction_detail).toEqual({ USD: { value: order.total_price, fx: null } });
    const [line] = order.items;
    expect(line.id).toMatch(/^E-/);
    expect(line.face_value).toBe("100.00");
    expect(line.price).toBe(order.total_price);
    expect(line.currency).toBe("USD");
    expect(line.products).toEqual({ type: "SINGLE", value: product.code });
    expect(line.distribution_method).toEqual({
      type: "EMAIL",
      email_address: "jane.doe@example.com",
      template_id: "TPL-1",
    });
    expect(line.payout).toMatchObject({ status: "ACTIVE", url: expect.stringMatching(/^https:/) });
    expect(line.payout.expiry_date > line.payout.status_updated_at).toBe(true);
    expect((await call(sandbox, `/v2/order/${order.id}`)).json).toEqual(order);
  });

  it("debits the balance of the payment currency", async () => {
    const before = (await call(sandbox, "/v2/balance?currency=USD")).json;
    const order = (await postOrder(sandbox, validOrder(sandbox), { mode: "sync" })).json;
    const after = (await call(sandbox, "/v2/balance?currency=USD")).json;
    expect(after.currency).toBe("USD");
    expect(Number(before.balance) - Number(after.balance)).toBeCloseTo(Number(order.total_price));
    const list = (await call(sandbox, "/v2/balance")).json;
    expect(list).toContainEqual(after);
    expect(list).toContainEqual({ balance: "30.00", currency: "GBP" });
    expect((await call(sandbox, "/v2/balance?currency=usd")).json.type).toBe("bad_request");
  });

  it("orders fixed values, subscription plans, payment products and JPY", async () => {
    const fixed = findProduct(
      sandbox,
      (p) => isLiveOrderable(p) && p.gift_card?.denominations.type === "fixed",
    );
    const value = fixed.gift_card?.denominations.available_list?.[0] as string;
    const ok = await postOrder(
      sandbox,
      orderBody(fixed.currency, [item(fixed.code, Number(value))]),
      {
        mode: "sync",
      },
    );
    expect(ok.status).toBe(200);

    const sub = findProduct(sandbox, (p) => isLiveOrderable(p) && p.subscription !== undefined);
    const plan = sub.subscription?.subscription_plans[0];
    const byPlan = await postOrder(
      sandbox,
      orderBody(sub.currency, [item(plan?.subscription_plan_code as string, Number(plan?.price))]),
      { mode: "sync" },
    );
    expect(byPlan.status).toBe(200);
    expect(byPlan.json.items[0].face_value).toBe(plan?.price);
    const byCode = await postOrder(sandbox, orderBody(sub.currency, [item(sub.code, 1)]));
    expect(byCode.json.type).toBe("product_validation_error");

    const pay = findProduct(sandbox, (p) => isLiveOrderable(p) && p.payment !== undefined);
    const payment = await postOrder(sandbox, orderBody(pay.currency, [item(pay.code, 1)]), {
      mode: "sync",
    });
    expect(payment.status).toBe(200);

    const yen = findProduct(
      sandbox,
      (p) =>
        isLiveOrderable(p) && p.currency === "JPY" && p.gift_card?.denominations.type === "open",
    );
    const face = Number(yen.gift_card?.denominations.minimum_value);
    const jpy = await postOrder(sandbox, orderBody("JPY", [item(yen.code, face)]), {
      mode: "sync",
    });
    expect(jpy.json.items[0].face_value).toBe(String(face));
    expect(jpy.json.total_price).toMatch(/^\d+$/);
  });

  it("answers 400 bad_request without an idempotency key or with malformed JSON", async () => {
    const noKey = await postOrder(sandbox, validOrder(sandbox), { key: "" });
    expect(noKey.status).toBe(400);
    expect(noKey.json.type).toBe("bad_request");
    const malformed = await postOrder(sandbox, '{"items": [', { mode: "sync" });
    expect(malformed.status).toBe(400);
    expect(malformed.json.type).toBe("bad_request");
    const mode = await postOrder(sandbox, validOrder(sandbox), { mode: "fast" });
    expect(mode.status).toBe(400);
    expect(mode.json.type).toBe("invalid_execution_mode");
  });

  it("answers 422 validation_error with details and locations", async () => {
    const product = openCard(sandbox);
    const cases: [unknown, string[]][] = [
      [{ items: [item(product.code, 10)] }, ["body", "payment_method"]],
      [orderBody("USD", "nope" as unknown as unknown[]), ["body", "items"]],
      [orderBody("USD", [item(product.code, -5)]), ["body", "items", "0", "face_value"]],
      [
        orderBody("USD", [{ ...item(product.code, 10), face_value: "10" }]),
        ["body", "items", "0", "face_value"],
      ],
      [
        orderBody("USD", [item(product.code, 10), item(product.code, 10, "not-an-email")]),
        ["body", "items", "1", "distribution_method", "email_address"],
      ],
      [
        orderBody("USD", [{ ...item(product.code, 10), products: { type: "BUNDLE", values: [] } }]),
        ["body", "items", "0", "products", "type"],
      ],
      [
        orderBody("USD", [
          { ...item(product.code, 10), products: { type: "MULTIPLE", values: [product.code] } },
        ]),
        ["body", "items", "0", "products", "values"],
      ],
      [
        orderBody("USD", [
          { ...item(product.code, 10.5), products: { type: "TEMPLATE", template_id: "PT-1" } },
        ]),
        ["body", "items", "0", "face_value"],
      ],
      [
        orderBody("USD", [
          {
            ...item(product.code, 10),
            distribution_method: { type: "RECIPIENT", email_address: "a@example.com" },
          },
        ]),
        ["body", "items", "0", "distribution_method", "recipient_reference"],
      ],
      [
        orderBody("USD", [
          {
            ...item(product.code, 10),
            distribution_method: {
              type: "RECIPIENT",
              recipient_reference: "no spaces",
              email_address: "a@example.com",
            },
          },
        ]),
        ["body", "items", "0", "distribution_method", "recipient_reference"],
      ],
      [
        orderBody("USD", [item(product.code, 10)], { description: "x".repeat(129) }),
        ["body", "description"],
      ],
      [
        orderBody("USD", [item(product.code, 10)], {
          metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])),
        }),
        ["body", "metadata"],
      ],
      [
        orderBody("USD", [item(product.code, 10)], { metadata: { ["k".repeat(41)]: "v" } }),
        ["body", "metadata", "k".repeat(41)],
      ],
      [
        orderBody("USD", [item(product.code, 10)], { metadata: { k: "v".repeat(201) } }),
        ["body", "metadata", "k"],
      ],
      [
        orderBody("USD", [item(product.code, 10)], { metadata: { k: 1 } }),
        ["body", "metadata", "k"],
      ],
      [orderBody("USD", []), ["body", "items"]],
      [
        orderBody(
          "USD",
          Array.from({ length: 201 }, () => item(product.code, 10)),
        ),
        ["body", "items"],
      ],
    ];
    for (const [body, location] of cases) {
      const res = await postOrder(sandbox, body);
      expect(res.status, JSON.stringify(location)).toBe(422);
      expect(res.json.type).toBe("validation_error");
      expect(res.json.details.map((d: { location: string[] }) => d.location)).toContainEqual(
        location,
      );
      for (const detail of res.json.details) {
        expect(detail).toEqual({
          type: expect.any(String),
          message: expect.any(String),
          location: expect.any(Array),
        });
      }
    }
    const twoSync = await postOrder(
      sandbox,
      orderBody("USD", [item(product.code, 10), item(product.code, 10)]),
      {
        mode: "sync",
      },
    );
    expect(twoSync.status).toBe(422);
    expect(twoSync.json.details[0].location).toEqual(["body", "items"]);
    const many = Array.from({ length: 200 }, () =>
      item(product.code, Number(product.gift_card?.denominations.minimum_value)),
    );
    expect((await postOrder(sandbox, orderBody("USD", many))).status).toBe(202);
  });

  it("refuses products that cannot be ordered with product_validation_error", async () => {
    const open = openCard(sandbox);
    // USD like the first item, so that only the second one is wrong.
    const notOrderable = findProduct(
      sandbox,
      (p) => !p.is_orderable && p.state === "LIVE" && p.currency === "USD",
    );
    const disabled = findProduct(
      sandbox,
      (p) => p.state === "TEMPORARILY_DISABLED" && p.currency === "USD",
    );
    const fixed = findProduct(
      sandbox,
      (p) =>
        isLiveOrderable(p) && p.currency === "USD" && p.gift_card?.denominations.type === "fixed",
    );
    const max = Number(open.gift_card?.denominations.maximum_value);
    const cases: [Product | string, number, string][] = [
      ["NOPE-XX-99999", 10, "NOPE-XX-99999"],
      [notOrderable, 10, "not orderable"],
      [disabled, 10, "TEMPORARILY_DISABLED"],
      [open, max + 1, "between"],
      [open, 10.001, "decimals"],
      [fixed, 0.37, "one of"],
    ];
    for (const [product, face, why] of cases) {
      const code = typeof product === "string" ? product : product.code;
      const currency = typeof product === "string" ? "USD" : product.currency;
      const res = await postOrder(
        sandbox,
        orderBody(currency, [item(open.code, 5), item(code, face)]),
      );
      expect(res.status, why).toBe(400);
      expect(res.json.type, why).toBe("product_validation_error");
      expect(res.json.message).toContain("items[1]");
      expect(res.json.message).toContain(why);
    }
  });

  it("answers currency_mismatch and insufficient_funds", async () => {
    const usd = openCard(sandbox);
    const mismatch = await postOrder(sandbox, orderBody("EUR", [item(usd.code, 10)]));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.type).toBe("currency_mismatch");
    const gbp = openCard(sandbox, "GBP");
    const face = Number(gbp.gift_card?.denominations.maximum_value);
    const short = await postOrder(sandbox, orderBody("GBP", [item(gbp.code, face)]), {
      mode: "sync",
    });
    expect(short.status).toBe(400);
    expect(short.json.type).toBe("insufficient_funds");
    expect((await call(sandbox, "/v2/balance?currency=GBP")).json.balance).toBe("30.00");
  });

  it("forces errors with X-Trigger-Error", async () => {
    const expected: [string, number][] = [
      ["insufficient_funds", 400],
      ["internal_server_error", 500],
      ["ordering_restricted", 403],
    ];
    for (const [trigger, status] of expected) {
      const res = await postOrder(sandbox, validOrder(sandbox), {
        headers: { "X-Trigger-Error": trigger },
      });
      expect(res.status).toBe(status);
      expect(res.json.type).toBe(trigger);
    }
    expect(sandbox.state.book.orders.size).toBe(0);
  });

  it("accepts an async order with 202, PROCESSING, then COMPLETED", async () => {
    sandbox.setFaults({ asyncCompleteMs: 300 });
    try {
      const res = await postOrder(sandbox, validOrder(sandbox));
      expect(res.status).toBe(202);
      expect(Object.keys(res.json).sort()).toEqual(["id", "status"]);
      expect(res.json.status).toBe("PROCESSING");
      const early = await call(sandbox, `/v2/order/${res.json.id}`);
      expect(early.json).toEqual({
        id: res.json.id,
        status: "PROCESSING",
        message: expect.any(String),
      });
      const done = await waitFor(async () => {
        const got = await call(sandbox, `/v2/order/${res.json.id}`);
        return got.json.status === "COMPLETED" ? got.json : undefined;
      });
      expect(done.items).toHaveLength(1);
      expect(done.completed_at >= done.created_at).toBe(true);
    } finally {
      sandbox.setFaults({ asyncCompleteMs: 1000 });
    }
  });

  it("completes an async order on the next read when asyncCompleteMs is 0", async () => {
    sandbox.setFaults({ asyncCompleteMs: 0 });
    try {
      const res = await postOrder(sandbox, validOrder(sandbox));
      expect((await call(sandbox, `/v2/order/${res.json.id}`)).json.status).toBe("COMPLETED");
    } finally {
      sandbox.setFaults({ asyncCompleteMs: 1000 });
    }
  });

  it("shows orders, stats and resets them", async () => {
    const key = newKey();
    const order = (await postOrder(sandbox, validOrder(sandbox), { key, mode: "sync" })).json;
    await postOrder(sandbox, {});
    const listed = (await call(sandbox, "/_sandbox/orders", { key: null })).json.orders;
    expect(listed).toEqual([{ ...order, idempotency_key: key, api_key_id: apiKeyId(KEY) }]);
    const stats = (await call(sandbox, "/_sandbox/stats", { key: null })).json;
    expect(stats.orders).toBe(1);
    expect(stats.items).toBe(1);
    expect(stats.requests["POST /v2/order"]).toEqual({ "200": 1, "422": 1 });
    await call(sandbox, `/v2/order/${order.id}`);
    expect((await call(sandbox, "/_sandbox/stats")).json.requests["GET /v2/order/{id}"]).toEqual({
      "200": 1,
    });

    expect((await call(sandbox, "/_sandbox/reset", { method: "POST" })).status).toBe(200);
    expect((await call(sandbox, "/_sandbox/orders")).json.orders).toEqual([]);
    expect((await call(sandbox, "/_sandbox/stats")).json).toMatchObject({
      orders: 0,
      items: 0,
      requests: {},
    });
    expect((await call(sandbox, "/v2/balance?currency=GBP")).json.balance).toBe("30.00");
  });
});

describe("idempotency", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());
  afterEach(() => {
    sandbox.reset();
    sandbox.setFaults({ latencyMs: 0, failRate: 0, dropRate: 0 });
  });

  it("replays the same status and body for the same key and body", async () => {
    const key = newKey();
    const body = validOrder(sandbox, { metadata: { a: "1", b: "2" } });
    const first = await postOrder(sandbox, body, { key, mode: "sync" });
    // Same body with its keys in another order: still the same request.
    const reordered = {
      metadata: { b: "2", a: "1" },
      items: body.items,
      payment_method: body.payment_method,
    };
    const second = await postOrder(sandbox, reordered, { key, mode: "sync" });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(sandbox.state.book.orders.size).toBe(1);

    const asyncKey = newKey();
    const accepted = await postOrder(sandbox, body, { key: asyncKey });
    expect((await postOrder(sandbox, body, { key: asyncKey })).text).toBe(accepted.text);
  });

  it("replays errors too, and refuses another body under the same key", async () => {
    const key = newKey();
    const bad = orderBody("USD", [item("NOPE-XX-1", 10)]);
    const first = await postOrder(sandbox, bad, { key });
    expect(first.json.type).toBe("product_validation_error");
    expect((await postOrder(sandbox, bad, { key })).text).toBe(first.text);
    const invalid = await postOrder(sandbox, { items: 3 }, { key: `${key}-422` });
    expect((await postOrder(sandbox, { items: 3 }, { key: `${key}-422` })).text).toBe(invalid.text);

    const other = await postOrder(sandbox, validOrder(sandbox), { key });
    expect(other.status).toBe(400);
    expect(other.json.type).toBe("idempotency_validation_error");
  });

  it("answers idempotency_in_progress while the first request runs", async () => {
    sandbox.setFaults({ latencyMs: 400 });
    const key = newKey();
    const body = validOrder(sandbox);
    const first = postOrder(sandbox, body, { key, mode: "sync" });
    // Well inside the first's 400 ms: the sandbox shows no request as begun-and-waiting.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await postOrder(sandbox, body, { key, mode: "sync" });
    expect(second.status).toBe(400);
    expect(second.json.type).toBe("idempotency_in_progress");
    expect((await first).status).toBe(200);
    expect((await postOrder(sandbox, body, { key, mode: "sync" })).text).toBe((await first).text);
  });

  it("does not record injected 500s: the same key works afterwards", async () => {
    sandbox.setFaults({ failRate: 1 });
    const key = newKey();
    const body = validOrder(sandbox);
    const failed = await postOrder(sandbox, body, { key, mode: "sync" });
    expect(failed.status).toBe(500);
    expect(failed.json.type).toBe("internal_server_error");
    expect(sandbox.state.book.orders.size).toBe(0);
    sandbox.setFaults({ failRate: 0 });
    expect((await postOrder(sandbox, body, { key, mode: "sync" })).status).toBe(200);
  });

  it("drops the connection after creating the order; the key replays it", async () => {
    sandbox.setFaults({ dropRate: 1 });
    const key = newKey();
    const body = validOrder(sandbox);
    await expect(postOrder(sandbox, body, { key, mode: "sync" })).rejects.toThrow();
    const orders = (await call(sandbox, "/_sandbox/orders")).json.orders;
    expect(orders).toHaveLength(1);
    expect(orders[0].idempotency_key).toBe(key);
    expect((await call(sandbox, "/_sandbox/stats")).json.requests["POST /v2/order"]).toEqual({
      dropped: 1,
    });
    sandbox.setFaults({ dropRate: 0 });
    const retry = await postOrder(sandbox, body, { key, mode: "sync" });
    expect(retry.status).toBe(200);
    expect(retry.json.id).toBe(orders[0].id);
  });

  it("draws faults from the fault seed: the same sequence on every run", async () => {
    const outcomes = async () => {
      sandbox.reset();
      sandbox.setFaults({ failRate: 0.5 });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push((await postOrder(sandbox, validOrder(sandbox))).status);
      return statuses;
    };
    const first = await outcomes();
    expect(first).toContain(500);
    expect(first).toContain(202);
    expect(await outcomes()).toEqual(first);
  });
});

describe("rate limit", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start({ orderRateLimit: 5 });
  });
  afterAll(() => sandbox.close());

  it("answers 429 rate exceeded past the limit, failed requests counted", async () => {
    for (let i = 0; i < 3; i++) expect((await postOrder(sandbox, {})).status).toBe(422);
    expect((await postOrder(sandbox, validOrder(sandbox), { key: "" })).status).toBe(400);
    expect((await postOrder(sandbox, validOrder(sandbox))).status).toBe(202);
    const limited = await postOrder(sandbox, validOrder(sandbox));
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate exceeded" });
    // Reads are not limited; a reset opens the window again.
    expect((await call(sandbox, "/v2/ping")).status).toBe(200);
    await call(sandbox, "/_sandbox/reset", { method: "POST" });
    expect((await postOrder(sandbox, validOrder(sandbox))).status).toBe(202);
    await call(sandbox, "/_sandbox/faults", { method: "POST", body: { order_rate_limit: 1 } });
    expect((await postOrder(sandbox, validOrder(sandbox))).status).toBe(429);
  });
});
