import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { ajv, DOC_ID, type Node, responseSchema } from "../helpers/openapi.js";
import {
  type Answer,
  call,
  item,
  openCard,
  orderBody,
  postOrder,
  start,
  validOrder,
} from "../helpers/sandbox.js";

function expectValid(answer: Answer, path: string, method: string) {
  const validate = responseSchema(path, method, answer.status);
  const ok = validate(answer.json);
  expect(
    ok,
    `${method.toUpperCase()} ${path} ${answer.status}: ${ajv.errorsText(validate.errors)}`,
  ).toBe(true);
}

describe("contract: sandbox responses against openapi-2024-02-05.json", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start({ products: 400, seed: 8, orderRateLimit: 50, asyncCompleteMs: 60_000 });
  });
  afterAll(() => sandbox.close());
  // Tests change limits and faults: each starts from the same state, in any order.
  afterEach(() => {
    sandbox.reset();
    sandbox.setFaults({ orderRateLimit: 50, asyncCompleteMs: 60_000, estimateFailRate: 0 });
  });

  it("product pages, the empty page and one product", async () => {
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await call(sandbox, `/v2/product?limit=150${after ? `&after=${after}` : ""}`);
      expectValid(res, "/product", "get");
      pages++;
      if (res.json.catalog.length === 0) break;
      after = res.json.pagination.cursors.after;
    }
    expect(pages).toBe(4);
    const code = sandbox.state.catalog.products[3]?.code;
    expectValid(await call(sandbox, `/v2/product/${code}`), "/product/{product_code}", "get");
    expectValid(await call(sandbox, "/v2/product/countries"), "/product/countries", "get");
    expectValid(await call(sandbox, "/v2/product/categories"), "/product/categories", "get");
    expectValid(await call(sandbox, "/v2/ping"), "/ping", "get");
  });

  it("the validators do refuse what the document forbids", () => {
    const product = structuredClone(sandbox.state.catalog.products[0]) as unknown as Node;
    const page = { catalog: [product], pagination: { cursors: {}, page: { limit: 1 } } };
    const validate = responseSchema("/product", "get", 200);
    expect(validate(page)).toBe(true);
    for (const broken of [
      { ...product, code: undefined },
      { ...product, state: "GONE" },
      { ...product, discount_multiplier: "0.13000" },
      { ...product, currency: "usd" },
    ]) {
      expect(validate({ ...page, catalog: [broken] }), JSON.stringify(broken).slice(0, 80)).toBe(
        false,
      );
    }
    expect(validate({ ...page, pagination: { cursors: { after: 3 }, page: {} } })).toBe(false);
    expect(responseSchema("/order", "post", 429)({ message: "slow down" })).toBe(false);
    expect(responseSchema("/order", "post", 422)({ type: "validation_error", message: "m" })).toBe(
      false,
    );
    expect(responseSchema("/order", "post", 202)({ id: "O-1", status: "DONE" })).toBe(false);
  });

  it("every product kind validates as a Product", () => {
    const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/Product`);
    for (const product of sandbox.state.catalog.products) {
      expect(validate?.(product), `${product.code}: ${ajv.errorsText(validate?.errors)}`).toBe(
        true,
      );
    }
  });

  it("sync and async orders, and their lookups", async () => {
    const sync = await postOrder(
      sandbox,
      validOrder(sandbox, { description: "d", metadata: { a: "b" } }),
      {
        mode: "sync",
      },
    );
    expect(sync.status).toBe(200);
    expectValid(sync, "/order", "post");
    expectValid(await call(sandbox, `/v2/order/${sync.json.id}`), "/order/{id}", "get");
    const bare = await postOrder(sandbox, validOrder(sandbox), { mode: "sync" });
    expectValid(bare, "/order", "post");

    const accepted = await postOrder(sandbox, validOrder(sandbox));
    expect(accepted.status).toBe(202);
    expectValid(accepted, "/order", "post");
    const processing = await call(sandbox, `/v2/order/${accepted.json.id}`);
    expect(processing.json.status).toBe("PROCESSING");
    expectValid(processing, "/order/{id}", "get");
    sandbox.setFaults({ asyncCompleteMs: 0 });
    const later = await postOrder(sandbox, validOrder(sandbox));
    const completed = await call(sandbox, `/v2/order/${later.json.id}`);
    expect(completed.json.status).toBe("COMPLETED");
    expectValid(completed, "/order/{id}", "get");
  });

  it("the order list: completed, processing and failed orders, and the empty page", async () => {
    await postOrder(sandbox, validOrder(sandbox, { metadata: { a: "b" } }), { mode: "sync" });
    await postOrder(sandbox, validOrder(sandbox));
    sandbox.setFaults({ asyncCompleteMs: 0, asyncFailRate: 1 });
    await postOrder(sandbox, validOrder(sandbox));
    sandbox.setFaults({ asyncFailRate: 0 });
    const list = await call(sandbox, "/v2/order?limit=500");
    expect(list.json.items.map((o: { status: string }) => o.status)).toEqual([
      "FAILED",
      "PROCESSING",
      "COMPLETED",
    ]);
    expectValid(list, "/order", "get");
    const end = await call(sandbox, `/v2/order?after=${list.json.pagination.cursors.after}`);
    expect(end.json.items).toEqual([]);
    expectValid(end, "/order", "get");
    expectValid(await call(sandbox, "/v2/order?limit=501"), "/order", "get");
  });

  it("balances, one and all", async () => {
    expectValid(await call(sandbox, "/v2/balance?currency=USD"), "/balance", "get");
    expectValid(await call(sandbox, "/v2/balance?currency=JPY"), "/balance", "get");
    expectValid(await call(sandbox, "/v2/balance"), "/balance", "get");
  });

  it("every error: 400, 401, 403, 404, 422, 429, 500", async () => {
    const product = sandbox.state.catalog.products.find((p) => p.currency === "USD");
    const answers: [Answer, string, string][] = [
      [await call(sandbox, "/v2/product?limit=0"), "/product", "get"],
      [await call(sandbox, "/v2/product", { key: null }), "/product", "get"],
      [await call(sandbox, "/v2/product/NOPE"), "/product/{product_code}", "get"],
      [await call(sandbox, "/v2/order/O-NOPE"), "/order/{id}", "get"],
      [await call(sandbox, "/v2/balance?currency=x"), "/balance", "get"],
      [await postOrder(sandbox, { items: [{ face_value: "x" }] }), "/order", "post"],
      [
        await postOrder(sandbox, orderBody("EUR", [item(product?.code as string, 10)])),
        "/order",
        "post",
      ],
      [await postOrder(sandbox, validOrder(sandbox), { key: "" }), "/order", "post"],
      [
        await postOrder(sandbox, validOrder(sandbox), {
          headers: { "X-Trigger-Error": "ordering_restricted" },
        }),
        "/order",
        "post",
      ],
      [
        await postOrder(sandbox, validOrder(sandbox), {
          headers: { "X-Trigger-Error": "internal_server_error" },
        }),
        "/order",
        "post",
      ],
    ];
    const statuses = new Set<number>();
    for (const [answer, path, method] of answers) {
      statuses.add(answer.status);
      expectValid(answer, path, method);
    }
    expect([...statuses].sort()).toEqual([400, 401, 403, 404, 422, 500]);
    expect(answers[5]?.[0].json.details.length).toBeGreaterThan(0);

    const key = "contract-conflict";
    await postOrder(sandbox, validOrder(sandbox), { key });
    const conflict = await postOrder(sandbox, {}, { key });
    expect(conflict.json.type).toBe("idempotency_validation_error");
    expectValid(conflict, "/order", "post");

    // 410 is not documented per path: its body is the common error body.
    const removed = await call(sandbox, "/v2/ping", { headers: { "X-Api-Version": "2023-01-16" } });
    expect(removed.status).toBe(410);
    const apiError = ajv.getSchema(`${DOC_ID}#/components/schemas/APIErrorResponse`);
    expect(apiError?.(removed.json)).toBe(true);

    sandbox.setFaults({ orderRateLimit: 1 });
    await postOrder(sandbox, {});
    const limited = await postOrder(sandbox, {});
    expect(limited.status).toBe(429);
    expectValid(limited, "/order", "post");
  });

  it("price estimates: the answer, a 422 and a 500", async () => {
    const estimate = (body: unknown) =>
      call(sandbox, "/v2/order/estimate", { method: "POST", body });
    const card = openCard(sandbox);
    const payment_method = { type: "ACCOUNT_BALANCE", currency: card.currency };
    const face_value = Number(card.gift_card?.denominations.minimum_value);
    const priceItems = [{ face_value, products: { type: "SINGLE", value: card.code } }];
    const other = sandbox.state.catalog.products.find(
      (p) =>
        p.code !== card.code &&
        p.is_orderable &&
        p.state === "LIVE" &&
        p.currency === card.currency &&
        p.gift_card?.denominations.type === "open",
    );
    const whole = Math.ceil(
      Math.max(face_value, Number(other?.gift_card?.denominations.minimum_value)),
    );
    const choice = { type: "MULTIPLE", values: [card.code, other?.code] };
    const items = [...priceItems, ...priceItems, { face_value: whole, products: choice }];
    const priced = await estimate({ payment_method, items });
    expect(priced.status).toBe(200);
    expect(priced.json.items).toHaveLength(3);
    expectValid(priced, "/order/estimate", "post");
    const refused = await estimate({ payment_method, items: [{ face_value: 0, products: {} }] });
    expect(refused.status).toBe(422);
    expectValid(refused, "/order/estimate", "post");
    sandbox.setFaults({ estimateFailRate: 1 });
    const failed = await estimate({ payment_method, items: priceItems });
    expect(failed.status).toBe(500);
    expectValid(failed, "/order/estimate", "post");
  });
});
