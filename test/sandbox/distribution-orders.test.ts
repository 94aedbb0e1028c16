// The sandbox takes items sent other than by e-mail to one product, as the service does: link
// and recipient distributions, a choice of products (MULTIPLE) and payout selection templates;
// what it answers validates against the OpenAPI document, and so do the bodies giftjobs builds.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { OrderRow } from "../../src/orders/order-row.js";
import type { Product, Sandbox } from "../../src/sandbox/index.js";
import { row } from "../helpers/csv.js";
import { ajv, DOC_ID, responseSchema } from "../helpers/openapi.js";
import { buildOrderRequest } from "../helpers/order-body.js";
import {
  type Answer,
  call,
  control,
  findProduct,
  isLiveOrderable,
  orderBody,
  postOrder,
  start,
} from "../helpers/sandbox.js";

function expectValid(answer: Answer, path: string, method: string) {
  const validate = responseSchema(path, method, answer.status);
  expect(validate(answer.json), ajv.errorsText(validate.errors)).toBe(true);
}

const minimum = (p: Product) =>
  Number(p.gift_card?.denominations.minimum_value ?? p.payment?.denominations.minimum_value);

const openUsd = (p: Product) =>
  isLiveOrderable(p) && p.currency === "USD" && p.gift_card?.denominations.type === "open";

describe("sandbox: link, recipient and choice items", () => {
  let sandbox: Sandbox;
  let cards: Product[];
  let payment: Product;
  beforeAll(async () => {
    sandbox = await start({ products: 400, seed: 8 });
    // Minimums above 1, so that a face value below one of them can be tried.
    cards = sandbox.state.catalog.products.filter((p) => openUsd(p) && minimum(p) >= 2);
    cards = cards.slice(0, 2);
    expect(cards).toHaveLength(2);
    payment = findProduct(sandbox, (p) => isLiveOrderable(p) && p.payout_type === "payment");
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.reset());

  const face = () => Math.ceil(Math.max(...cards.map(minimum)));

  async function sync(items: unknown[], currency = "USD") {
    const answer = await postOrder(sandbox, orderBody(currency, items), { mode: "sync" });
    return answer;
  }

  it("pays a link item with no e-mail: its link and expiry, valid per the OpenAPI", async () => {
    const [card] = cards;
    const answer = await sync([
      {
        face_value: minimum(card!),
        distribution_method: { type: "PAYOUT_LINK" },
        products: { type: "SINGLE", value: card!.code },
      },
    ]);
    expect(answer.status).toBe(200);
    expectValid(answer, "/order", "post");
    const [item] = answer.json.items;
    expect(item.distribution_method).toEqual({ type: "PAYOUT_LINK", template_id: "TPL-DEFAULT" });
    expect(item.payout.url).toMatch(/^https:\/\//);
    expect(Date.parse(item.payout.expiry_date)).toBeGreaterThan(Date.now());
    expectValid(await call(sandbox, `/v2/order/${answer.json.id}`), "/order/{id}", "get");
  });

  it("pays a recipient in a payment product, with its reference; refuses a gift card", async () => {
    const recipient = {
      type: "RECIPIENT",
      recipient_reference: "emp-42@acme.io",
      email_address: "jane@example.com",
    };
    const paid = await sync(
      [
        {
          face_value: minimum(payment),
          distribution_method: recipient,
          products: { type: "SINGLE", value: payment.code },
        },
      ],
      payment.currency,
    );
    expect(paid.status).toBe(200);
    expectValid(paid, "/order", "post");
    expect(paid.json.items[0].distribution_method).toMatchObject(recipient);
    const refused = await sync([
      {
        face_value: minimum(cards[0]!),
        distribution_method: recipient,
        products: { type: "SINGLE", value: cards[0]!.code },
      },
    ]);
    expect(refused.status).toBe(400);
    expect(refused.json.type).toBe("product_validation_error");
  });

  it("pays a choice of products at its face value, not below any product's minimum", async () => {
    const values = cards.map((c) => c.code);
    const item = (face_value: number, codes = values) => ({
      face_value,
      distribution_method: { type: "EMAIL", email_address: "jane@example.com" },
      products: { type: "MULTIPLE", values: codes },
    });
    const paid = await sync([item(face())]);
    expect(paid.status).toBe(200);
    expectValid(paid, "/order", "post");
    expect(paid.json.items[0]).toMatchObject({
      products: { type: "MULTIPLE", values },
      face_value: `${face()}.00`,
      price: `${face()}.00`,
    });
    const low = Math.ceil(Math.max(...cards.map(minimum))) - 1;
    expect((await sync([item(low)])).json.type).toBe("product_validation_error");
    const euro = findProduct(sandbox, (p) => isLiveOrderable(p) && p.currency === "EUR");
    const mixed = await sync([item(Math.max(face(), minimum(euro)), [values[0]!, euro.code])]);
    expect(mixed.json.type).toBe("currency_mismatch");
  });

  it("pays a payout selection template it knows, answering its products", async () => {
    const values = cards.map((c) => c.code);
    const item = {
      face_value: face(),
      distribution_method: { type: "PAYOUT_LINK" },
      products: { type: "TEMPLATE", template_id: "PT-USD" },
    };
    const unknown = await sync([item]);
    expect(unknown.status).toBe(400);
    expect(unknown.json.type).toBe("product_validation_error");
    expect(await control(sandbox, "/_sandbox/selection-templates", { "PT-USD": values })).toEqual({
      "PT-USD": values,
    });
    const paid = await sync([item]);
    expect(paid.status).toBe(200);
    expectValid(paid, "/order", "post");
    expect(paid.json.items[0].products).toEqual({
      type: "TEMPLATE",
      template_id: "PT-USD",
      values,
    });
    expectValid(await call(sandbox, `/v2/order/${paid.json.id}`), "/order/{id}", "get");
    const bad = await fetch(`${sandbox.url}/_sandbox/selection-templates`, {
      method: "POST",
      body: JSON.stringify({ "PT-1": ["ONLY-ONE"] }),
    });
    expect(bad.status).toBe(400);
  });

  it("takes the bodies giftjobs builds for each kind as the document's NewOrderDetails", () => {
    const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/NewOrderDetails`)!;
    const rows: OrderRow[] = [
      row({ email: "", distribution: "link", template_id: "T1" }),
      row({ distribution: "recipient", recipient_reference: "r-1" }),
      row({ product_code: "", product_codes: ["A", "B"], face_value: "20" }),
      row({ product_code: "", selection_template_id: "PT-1", face_value: "20" }),
      row(),
    ];
    const body = buildOrderRequest(rows, "USD", { name: "c" });
    expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
  });
});
