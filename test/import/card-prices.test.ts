// The card book and the service's prices read into it, with clients that answer what a test
// needs (the sandbox's answers are tested in service-prices.test.ts).
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { errorFromResponse } from "../../src/api/error-from-response.js";
import { ApiError, ServiceUnreachableError } from "../../src/api/errors/index.js";
import type { OrderEstimateRequest } from "../../src/api/order-estimate.js";
import type { OrderEstimate } from "../../src/api/schemas.js";
import { RunError } from "../../src/errors/run-error.js";
import { CardBook } from "../../src/import/card-prices.js";
import { pricingText } from "../../src/import/pricing.js";
import { priceWithService } from "../../src/import/service-prices.js";
import { silentLogger } from "../../src/log.js";
import { toUnits } from "../../src/money.js";
import { row } from "../helpers/csv.js";

/**
 * A client whose estimates answer `answer(request)`, and whose balance (the key check) answers
 * `balance()`; the requests are kept, and the balance checks counted.
 */
function clientOf(answer: (request: OrderEstimateRequest) => unknown, balance = () => []) {
  const requests: OrderEstimateRequest[] = [];
  const checks = { balance: 0 };
  const client = {
    estimateOrder: async (request: OrderEstimateRequest) => {
      requests.push(request);
      return answer(request) as OrderEstimate;
    },
    getBalance: async () => {
      checks.balance += 1;
      return balance();
    },
  } as unknown as ApiClient;
  return { client, requests, checks };
}

const refusedKey = (status: number, type: string) => {
  throw errorFromResponse(status, JSON.stringify({ type, message: "The API key is not valid" }));
};

/** The service's answer when every item costs `price(face)`. */
function answerAt(price: (face: number) => string) {
  return (request: OrderEstimateRequest): OrderEstimate => {
    const items = request.items.map((item) => ({
      products: item.products,
      face_value: String(item.face_value),
      price: price(item.face_value),
    }));
    const total = items.reduce((sum, item) => sum + toUnits(item.price, 2), 0n);
    return {
      payment_method: request.payment_method,
      items,
      currency: request.payment_method.currency,
      total_discount: "0",
      total_price: (Number(total) / 100).toFixed(2),
    } as OrderEstimate;
  };
}

const deps = (client?: ApiClient) => ({
  client,
  log: silentLogger,
  localBasis: "snapshot" as const,
});

describe("CardBook", () => {
  it("counts rows by currency, products and face value; a choice's codes in any order", () => {
    const book = new CardBook();
    book.count(row({ product_code: "A" }), "USD", 2500n, 2450n, true);
    book.count(row({ product_code: "A", line: 3 }), "USD", 2500n, 2450n, false);
    book.count(row({ product_code: "A", face_value: "30" }), "USD", 3000n, 2940n, true);
    const choice = { product_code: "", face_value: "25" };
    book.count(row({ ...choice, product_codes: ["B", "C"] }), "USD", 2500n, 2500n, true);
    book.count(row({ ...choice, product_codes: ["C", "B"] }), "USD", 2500n, 2500n, true);
    expect(book.size).toBe(3);
    expect([...book.entries()].map(([, card]) => [card.rows, card.newRows])).toEqual([
      [2, 1],
      [1, 1],
      [2, 2],
    ]);
  });

  it("at the service's prices: totals exact, a spooled row's price its card's", () => {
    const book = new CardBook();
    for (let i = 0; i < 200_000; i++)
      book.count(row({ product_code: "A", face_value: "0.1" }), "USD", 10n, 10n, i % 2 === 0);
    const key = [...book.entries()][0]![0];
    expect(book.serviceTotals()).toBeUndefined();
    book.pricedByService(new Map([[key, 9n]]));
    const totals = book.serviceTotals()!;
    expect(totals.all.toJSON()).toEqual({
      USD: { face_value: "20000.00", price: "18000.00", rows: 200_000 },
    });
    expect(totals.fresh.toJSON().USD).toEqual({
      face_value: "10000.00",
      price: "9000.00",
      rows: 100_000,
    });
    const spooled = {
      kind: "new" as const,
      identity: "i",
      payload: "p",
      currency: "USD",
      face: "10",
      price: "10",
      row: row({ product_code: "A", face_value: "0.10" }),
    };
    expect(book.priced([{ ...spooled }])).toEqual([{ ...spooled, price: "9" }]);
    expect(() => book.priced([{ ...spooled, face: "20" }])).toThrow(/a spooled row of no card/);
  });

  it("stops growing at its limit", () => {
    const book = new CardBook(2);
    for (const code of ["A", "B", "C"])
      book.count(row({ product_code: code }), "USD", 1n, 1n, true);
    expect(book.size).toBe(2);
    expect(book.overflow).toBe(true);
  });
});

describe("priceWithService", () => {
  it("one estimate per currency and 500 cards; the book gets the prices", async () => {
    const book = new CardBook();
    for (let cents = 100; cents < 1100; cents++)
      book.count(row({ face_value: String(cents / 100) }), "USD", BigInt(cents), 0n, true);
    book.count(row({ product_code: "E" }), "EUR", 2500n, 0n, true);
    const { client, requests } = clientOf(answerAt((face) => (face * 0.9).toFixed(2)));
    expect(await priceWithService(book, deps(client))).toEqual({ by: "service" });
    expect(requests.map((r) => [r.payment_method.currency, r.items.length])).toEqual([
      ["EUR", 1],
      ["USD", 500],
      ["USD", 500],
    ]);
    expect(book.serviceTotals()!.all.toJSON().EUR!.price).toBe("22.50");
  });

  it("keeps the local prices, saying why, when the answer cannot be used", async () => {
    const cases: [(r: OrderEstimateRequest) => unknown, RegExp][] = [
      [
        (r) => ({ ...answerAt(() => "9.00")(r), total_price: "1.00" }),
        /total_price 1.00 is not the sum of its items' prices/,
      ],
      [(r) => ({ ...answerAt(() => "9.00")(r), currency: "EUR" }), /asked in USD, answered in EUR/],
      [
        (r) => ({ ...answerAt(() => "9.00")(r), items: [], total_price: 0 }),
        /no price for .*"AMZ-US".* at 10 USD/,
      ],
      [
        (r) => {
          const answer = answerAt(() => "9.00")(r);
          return { ...answer, items: answer.items.map((i) => ({ ...i, price: "9.001" })) };
        },
        /price 9.001 is not an amount of USD/,
      ],
    ];
    for (const [answer, why] of cases) {
      const book = new CardBook();
      book.count(row({ face_value: "10" }), "USD", 1000n, 987n, true);
      const pricing = await priceWithService(book, deps(clientOf(answer).client));
      expect(pricing.by).toBe("snapshot");
      expect(pricing.note).toMatch(/^the service's answer could not be read: order estimate: /);
      expect(pricing.note).toMatch(why);
      expect(book.serviceTotals()).toBeUndefined();
    }
  });

  it("does not ask without rows, a client, within the limit, or for template rows", async () => {
    const { client, requests, checks } = clientOf(answerAt(() => "1.00"));
    expect((await priceWithService(new CardBook(), deps(client))).note).toBe("no rows to price");
    const book = new CardBook(1);
    book.count(row(), "USD", 2500n, 2500n, true);
    expect((await priceWithService(book, deps())).note).toMatch(/not asked: no API client/);
    book.count(row({ product_code: "B" }), "USD", 2500n, 2500n, true);
    expect((await priceWithService(book, deps(client))).note).toMatch(
      /not asked: more than 1 distinct cards/,
    );
    const template = new CardBook();
    template.count(row({ product_code: "", selection_template_id: "T1" }), "USD", 1n, 1n, true);
    expect((await priceWithService(template, deps(client))).note).toMatch(
      /not asked: it does not price template rows/,
    );
    expect(requests).toEqual([]);
    // Not asked for prices, the service is still asked whether it takes the key: once each.
    expect(checks.balance).toBe(2);
  });

  it("a refused API key stops it, whichever call met it, in one line naming the setting", async () => {
    const book = new CardBook();
    book.count(row(), "USD", 2500n, 2500n, true);
    const template = new CardBook();
    template.count(row({ product_code: "", selection_template_id: "T1" }), "USD", 1n, 1n, true);
    const estimate401 = clientOf(() => refusedKey(401, "invalid_api_key"));
    const estimate403 = clientOf(() => refusedKey(403, "forbidden"));
    const check401 = clientOf(
      answerAt(() => "1.00"),
      () => refusedKey(401, "invalid_api_key"),
    );
    const stops: [CardBook, ApiClient, string][] = [
      [
        book,
        estimate401.client,
        "the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY. Nothing was enqueued.",
      ],
      [
        book,
        estimate403.client,
        "the service refused the API key (forbidden, HTTP 403: The API key is not valid): check GIFTJOBS_API_KEY. Nothing was enqueued.",
      ],
      [
        template,
        check401.client,
        "the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY. Nothing was enqueued.",
      ],
    ];
    for (const [cards, client, message] of stops) {
      const error = await priceWithService(cards, deps(client)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunError);
      expect((error as RunError).message).toBe(message);
    }
    // A key check that meets anything else leaves it to the balance check and the workers.
    const away = clientOf(
      answerAt(() => "1.00"),
      () => {
        throw new ServiceUnreachableError({
          url: "http://x",
          reason: "connection refused",
          type: "connection_refused",
        });
      },
    );
    expect((await priceWithService(template, deps(away.client))).note).toMatch(
      /not asked: it does not price template rows/,
    );
  });

  it("an error that is not the service's is thrown: a bug is not a fallback", async () => {
    const book = new CardBook();
    book.count(row(), "USD", 2500n, 2500n, true);
    const broken = clientOf(() => {
      throw new TypeError("bug");
    });
    await expect(priceWithService(book, deps(broken.client))).rejects.toThrow("bug");
    const failing = clientOf(() => {
      throw new ApiError("ServerError", {
        status: 503,
        type: "unavailable",
        message: "down\nfor now",
      });
    });
    const pricing = await priceWithService(book, deps(failing.client));
    expect(pricing.note).toBe("the service did not answer: 503 unavailable: down for now");
  });
});

describe("pricingText", () => {
  it("says who priced, and why not the service", () => {
    expect(pricingText({ by: "service" })).toBe("prices: the service's own (its estimate)");
    expect(pricingText({ by: "snapshot", note: "the service did not answer: x" })).toBe(
      "prices: estimated locally from the catalog snapshot (the service did not answer: x)",
    );
    expect(pricingText({ by: "face_value", note: "n" })).toBe(
      "prices: estimated locally at face value (no catalog check: the discount is unknown) (n)",
    );
  });
});
