import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import {
  MalformedResponseError,
  RefusedRequestError,
  ValidationError,
} from "../../src/api/errors/index.js";
import type { OrderEstimateRequest } from "../../src/api/order-estimate.js";
import { OrderEstimateSchema } from "../../src/api/schemas.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { clientOf, start } from "../helpers/api-client.js";
import { openCard, stats } from "../helpers/sandbox.js";

function request(code: string, faces: number[]): OrderEstimateRequest {
  return {
    payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
    items: faces.map((face_value) => ({ face_value, products: { type: "SINGLE", value: code } })),
  };
}

describe("estimateOrder", () => {
  let sandbox: Sandbox;
  let client: ApiClient;
  beforeAll(async () => {
    sandbox = await start();
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it("prices the items; the service's numbers are read as decimal strings", async () => {
    const card = openCard(sandbox);
    const min = Number(card.gift_card!.denominations.minimum_value);
    const estimate = await client.estimateOrder(request(card.code, [min, min + 0.5]));
    expect(estimate.currency).toBe("USD");
    expect(estimate.items).toHaveLength(2);
    for (const item of estimate.items) {
      expect(item.price).toMatch(/^\d+(\.\d+)?$/);
      expect(item.face_value).toMatch(/^\d+(\.\d+)?$/);
    }
    expect(estimate.total_price).toMatch(/^\d+(\.\d+)?$/);
  });

  it("reads amounts as strings or numbers; refuses what is neither a plain decimal", () => {
    const body = (price: unknown) => ({
      payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
      items: [{ products: { type: "SINGLE", value: "A" }, face_value: "10.00", price }],
      currency: "USD",
      total_discount: 0.13,
      total_price: price,
    });
    const asString = OrderEstimateSchema.parse(body("9.87"));
    const asNumber = OrderEstimateSchema.parse(body(9.87));
    expect(asString.items[0]!.price).toBe("9.87");
    expect(asNumber.items[0]!.price).toBe("9.87");
    expect(asNumber.total_discount).toBe("0.13");
    for (const bad of [-1, 1e21, 1e-7, "9,87", null])
      expect(OrderEstimateSchema.safeParse(body(bad)).success, String(bad)).toBe(false);
  });

  it("sends nothing for 0 or 501 items; the refusals of the service are ApiErrors", async () => {
    const card = openCard(sandbox);
    const min = Number(card.gift_card!.denominations.minimum_value);
    const before = (await stats(sandbox)).total_requests;
    await expect(client.estimateOrder(request(card.code, []))).rejects.toBeInstanceOf(
      RefusedRequestError,
    );
    const many = Array<number>(501).fill(min);
    await expect(client.estimateOrder(request(card.code, many))).rejects.toBeInstanceOf(
      RefusedRequestError,
    );
    expect((await stats(sandbox)).total_requests).toBe(before);
    await expect(client.estimateOrder(request("NO-SUCH", [10]))).rejects.toBeInstanceOf(
      ValidationError,
    );
    sandbox.setFaults({ estimateFailRate: 1 });
    try {
      await expect(client.estimateOrder(request(card.code, [min]))).rejects.toMatchObject({
        name: "ServerError",
      });
    } finally {
      sandbox.setFaults({ estimateFailRate: 0 });
    }
    // A 200 that is not an estimate (here the ping's body, answered for the route).
    const pinging = clientOf(sandbox, {
      fetch: async (url, init) =>
        fetch(String(url).replace("/v2/order/estimate", "/v2/ping"), {
          ...init,
          method: "GET",
          body: undefined,
        }),
    });
    await expect(pinging.estimateOrder(request(card.code, [min]))).rejects.toBeInstanceOf(
      MalformedResponseError,
    );
  });
});
