import { afterAll, describe, expect, it } from "vitest";
import type { Order } from "../../src/api/schemas.js";
import {
  outsiderOf,
  rowLook,
  sortOutsiders,
  unreadOutsider,
} from "../../src/campaigns/reconcile-outsiders.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { LedgerRow } from "../../src/ledger/types.js";
import { testRedis, uniquePrefix } from "../helpers/redis.js";

/** A ledger row of `fields` (an e-mail row of one product unless told). */
function row(fields: Partial<LedgerRow>): LedgerRow {
  return {
    line: 2,
    order: 1,
    generation: 0,
    payload_hash: "h",
    email: "jane.doe@example.com",
    product_code: "AMZ-US",
    face_value: "10.00",
    currency: "USD",
    ...fields,
  };
}

/** A service order of one item, as GET /v2/order/{id} shows it. */
function order(item: Record<string, unknown>, currency = "USD"): Order {
  return {
    id: "O-1",
    status: "COMPLETED",
    created_at: "2025-01-01T00:00:00.000Z",
    currency,
    total_price: "9.50",
    items: [
      {
        id: "I-1",
        face_value: "10.00",
        distribution_method: { type: "EMAIL", email_address: "Jane.Doe@example.com" },
        products: { type: "SINGLE", value: "AMZ-US" },
        ...item,
      },
    ],
  };
}

const lookOf = (o: Order) => outsiderOf(o).items[0]?.look;

/**
 * What makes a service order's item look like a campaign's row (docs/commands.md,
 * "Reconcile"): currency, distribution type, products and face value; and how the window's
 * other orders are totalled.
 */
describe("reconcile: look-alike items and other orders' totals", () => {
  it("an item like a row: same card, face value (any spelling), currency, distribution", () => {
    expect(lookOf(order({}))).toBe(rowLook(row({})));
    expect(lookOf(order({ face_value: 10 }))).toBe(rowLook(row({ face_value: "10" })));
    // The e-mail address and the template are not part of it.
    expect(
      lookOf(
        order({
          distribution_method: { type: "EMAIL", email_address: "x@y.org", template_id: "T" },
        }),
      ),
    ).toBe(rowLook(row({})));
  });

  it("another card, face value, currency or distribution type is not alike", () => {
    const look = rowLook(row({}));
    expect(lookOf(order({ products: { type: "SINGLE", value: "AMZ-CA" } }))).not.toBe(look);
    expect(lookOf(order({ face_value: "10.01" }))).not.toBe(look);
    expect(lookOf(order({}, "CAD"))).not.toBe(look);
    expect(lookOf(order({ distribution_method: { type: "PAYOUT_LINK" } }))).not.toBe(look);
    expect(lookOf(order({ distribution_method: { type: "PAYOUT_LINK" } }))).toBe(
      rowLook(row({ distribution: "link", email: "" })),
    );
  });

  it("a choice of cards in any order, a selection template by its id", () => {
    const choice = row({ product_code: "", product_codes: ["B-1", "A-1"] });
    const shown = order({ products: { type: "MULTIPLE", values: ["A-1", "B-1"] } });
    expect(lookOf(shown)).toBe(rowLook(choice));
    expect(outsiderOf(shown).items[0]?.product).toBe("A-1|B-1");
    const template = row({ product_code: "", selection_template_id: "PT-1" });
    const answered = order({
      products: { type: "TEMPLATE", template_id: "PT-1", values: ["A-1", "B-1"] },
    });
    expect(lookOf(answered)).toBe(rowLook(template));
    expect(outsiderOf(answered).items[0]?.product).toBe("template PT-1");
    expect(lookOf(answered)).not.toBe(rowLook(choice));
  });

  it("an item of products in a shape unknown, or with no currency, looks like nothing", () => {
    expect(outsiderOf(order({ products: { type: "BUNDLE" } })).items).toEqual([]);
    expect(outsiderOf({ ...order({}), currency: null }).items).toEqual([]);
  });

  it("names the campaign of another giftjobs campaign's order", () => {
    const tagged = { ...order({}), metadata: { giftjobs_campaign: "spring", giftjobs_key: "k" } };
    expect(outsiderOf(tagged).summary.tagged_campaign).toBe("spring");
    expect(outsiderOf(order({})).summary).not.toHaveProperty("tagged_campaign");
  });

  const redis = testRedis();
  afterAll(() => redis.quit());

  it("other orders: counted; totals per currency exact, FAILED ones and no price left out", async () => {
    const ledger = new Ledger(redis, uniquePrefix("outsiders"));
    const listed = (id: string, status: string, currency: string | null, price: string | null) =>
      unreadOutsider({ id, status, created_at: null, currency, total_price: price });
    const sorted = await sortOutsiders(ledger, "none", [
      listed("a", "COMPLETED", "USD", "0.10"),
      listed("b", "COMPLETED", "USD", "0.20"),
      listed("c", "COMPLETED", "JPY", "1500"),
      listed("d", "COMPLETED", "JPY", "25"),
      listed("e", "FAILED", "USD", "100.00"),
      listed("f", "COMPLETED", "KWD", "1.5"),
      listed("g", "COMPLETED", "USD", null),
    ]);
    expect(sorted).toEqual({
      lookalikes: [],
      other_orders: {
        count: 7,
        failed: 1,
        totals: { JPY: "1525", KWD: "1.500", USD: "0.30" },
      },
    });
  });
});
