import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Product, Sandbox } from "../../src/sandbox/index.js";
import {
  call,
  control,
  findProduct,
  isLiveOrderable,
  item,
  openCard,
  orderBody,
  postOrder,
  start,
  stats,
} from "../helpers/sandbox.js";

/** POST /v2/order/estimate of `items` ({face_value, products}) paid in `currency`. */
function estimate(sandbox: Sandbox, currency: string, items: unknown[]) {
  const body = { payment_method: { type: "ACCOUNT_BALANCE", currency }, items };
  return call(sandbox, "/v2/order/estimate", { method: "POST", body });
}

const single = (code: string, face: number) => ({
  face_value: face,
  products: { type: "SINGLE", value: code },
});

/** A LIVE orderable gift card of fixed denominations in `currency`. */
function fixedCard(sandbox: Sandbox, currency: string): Product {
  return findProduct(
    sandbox,
    (p) =>
      isLiveOrderable(p) && p.currency === currency && p.gift_card?.denominations.type === "fixed",
  );
}

describe("POST /v2/order/estimate", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await start({ asyncCompleteMs: 0 });
  });
  afterAll(() => sandbox.close());
  afterEach(() => {
    sandbox.reset();
    sandbox.setFaults({ estimateFailRate: 0, orderRateLimit: 300 });
  });

  it("prices items as an order of them is charged, debiting and recording nothing", async () => {
    const open = openCard(sandbox, "USD");
    const fixed = fixedCard(sandbox, "USD");
    const min = Number(open.gift_card!.denominations.minimum_value);
    const faces: [string, number][] = [
      [open.code, min],
      [open.code, min + 7.25],
      [fixed.code, Number(fixed.gift_card!.denominations.available_list![0])],
    ];
    const before = (await call(sandbox, "/v2/balance?currency=USD")).json.balance;
    const priced = await estimate(
      sandbox,
      "USD",
      faces.map(([code, face]) => single(code, face)),
    );
    expect(priced.status).toBe(200);
    expect((await call(sandbox, "/v2/balance?currency=USD")).json.balance).toBe(before);
    expect(sandbox.state.book.orders.size).toBe(0);

    const order = await postOrder(
      sandbox,
      orderBody(
        "USD",
        faces.map(([code, face]) => item(code, face)),
      ),
    );
    const made = (await call(sandbox, `/v2/order/${order.json.id}`)).json;
    expect(made.status).toBe("COMPLETED");
    expect(priced.json.total_price).toBe(Number(made.total_price));
    expect(priced.json.total_discount).toBe(Number(made.total_discount));
    expect(priced.json.items.map((i: { price: number }) => i.price)).toEqual(
      made.items.map((i: { price: string }) => Number(i.price)),
    );
    expect(priced.json).toMatchObject({
      currency: "USD",
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
    });
    expect(priced.json.items[0]).toMatchObject({
      products: { type: "SINGLE", value: open.code },
      face_value: min,
      discount_multiplier: open.discount_multiplier,
      currency: "USD",
    });
  });

  it("a choice of products costs its face value, as its order does; no template", async () => {
    const [a, b] = sandbox.state.catalog.products.filter(
      (p) =>
        isLiveOrderable(p) && p.currency === "USD" && p.gift_card?.denominations.type === "open",
    );
    const face = Math.ceil(
      Math.max(
        Number(a!.gift_card!.denominations.minimum_value),
        Number(b!.gift_card!.denominations.minimum_value),
      ),
    );
    const products = { type: "MULTIPLE", values: [b!.code, a!.code] };
    const priced = await estimate(sandbox, "USD", [{ face_value: face, products }]);
    expect(priced.status).toBe(200);
    expect(priced.json.items[0]).toMatchObject({ products, price: face, face_value: face });
    const choice = { ...item(a!.code, face), products };
    const order = await postOrder(sandbox, orderBody("USD", [choice]));
    const made = (await call(sandbox, `/v2/order/${order.json.id}`)).json;
    expect(Number(made.total_price)).toBe(priced.json.total_price);

    const template = { type: "TEMPLATE", template_id: "T-1" };
    const refused = await estimate(sandbox, "USD", [{ face_value: face, products: template }]);
    expect(refused.status).toBe(422);
    expect(refused.json.details).toEqual([
      expect.objectContaining({
        type: "enum",
        location: ["body", "items", "0", "products", "type"],
      }),
    ]);
  });

  it("a 422 names each item an order would refuse, and the request's own problems", async () => {
    const usd = openCard(sandbox, "USD");
    const eur = openCard(sandbox, "EUR");
    const min = Number(usd.gift_card!.denominations.minimum_value);
    const max = Number(usd.gift_card!.denominations.maximum_value);
    const refused = await estimate(sandbox, "USD", [
      single(usd.code, min),
      single("NO-SUCH-CODE", 10),
      single(eur.code, Number(eur.gift_card!.denominations.minimum_value)),
      single(usd.code, max + 1),
    ]);
    expect(refused.status).toBe(422);
    expect(refused.json.type).toBe("validation_error");
    expect(
      refused.json.details.map((d: { type: string; location: string[] }) => [
        d.type,
        d.location.join("."),
      ]),
    ).toEqual([
      ["product_validation_error", "body.items.1"],
      ["currency_mismatch", "body.items.2"],
      ["product_validation_error", "body.items.3"],
    ]);

    const tooMany = await estimate(sandbox, "USD", Array(501).fill(single(usd.code, min)));
    expect(tooMany.status).toBe(422);
    expect(tooMany.json.details).toEqual([
      expect.objectContaining({ type: "too_long", location: ["body", "items"] }),
    ]);
    const empty = await estimate(sandbox, "usd", []);
    expect(empty.json.details.map((d: { type: string }) => d.type)).toEqual([
      "string_pattern_mismatch",
      "too_short",
    ]);
    const notJson = await call(sandbox, "/v2/order/estimate", { method: "POST", body: "{" });
    expect(notJson.status).toBe(422);
    const all = await estimate(sandbox, "USD", Array(500).fill(single(usd.code, min)));
    expect(all.status).toBe(200);
  });

  it("needs the key; its fault is a 500; in the stats, not in the order limit", async () => {
    const usd = openCard(sandbox, "USD");
    const body = {
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
      items: [single(usd.code, Number(usd.gift_card!.denominations.minimum_value))],
    };
    const anonymous = await call(sandbox, "/v2/order/estimate", {
      method: "POST",
      body,
      key: null,
    });
    expect(anonymous.status).toBe(401);
    await control(sandbox, "/_sandbox/faults", { estimate_fail_rate: 1 });
    const failed = await call(sandbox, "/v2/order/estimate", { method: "POST", body });
    expect(failed.status).toBe(500);
    expect(failed.json.type).toBe("internal_server_error");
    await control(sandbox, "/_sandbox/faults", { estimate_fail_rate: 0, order_rate_limit: 1 });
    for (let i = 0; i < 3; i++)
      expect((await call(sandbox, "/v2/order/estimate", { method: "POST", body })).status).toBe(
        200,
      );
    expect((await stats(sandbox)).requests["POST /v2/order/estimate"]).toEqual({
      "200": 3,
      "401": 1,
      "500": 1,
    });
  });
});
