import { describe, expect, it } from "vitest";
import type { Order } from "../../src/api/schemas.js";
import {
  outsiderOf,
  sortOutsiders,
  unreadOutsider,
} from "../../src/campaigns/reconcile-outsiders.js";
import { rowPayment } from "../../src/campaigns/reconcile-payments.js";
import type { LedgerRow } from "../../src/ledger/types.js";

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

const paymentOf = (o: Order) => outsiderOf(o).items[0]?.payment;

/**
 * When a service order's item pays a campaign's row again (docs/commands.md, "Reconcile"): the
 * same payee (e-mail in any case, or recipient reference), products, face value and currency;
 * and how the window's other orders are totalled.
 */
describe("reconcile: items that pay a row again, and other orders' totals", () => {
  it("the same person, card, face value (any spelling) and currency", () => {
    expect(paymentOf(order({}))).toBe(rowPayment(row({})));
    expect(paymentOf(order({ face_value: 10 }))).toBe(rowPayment(row({ face_value: "10" })));
    // The template is no part of it.
    const templated = {
      distribution_method: {
        type: "EMAIL",
        email_address: "jane.doe@example.com",
        template_id: "T",
      },
    };
    expect(paymentOf(order(templated))).toBe(rowPayment(row({})));
  });

  it("another person, card, face value or currency is not the same payment", () => {
    const paid = rowPayment(row({}));
    const elsewhere = { distribution_method: { type: "EMAIL", email_address: "x@y.org" } };
    expect(paymentOf(order(elsewhere))).not.toBe(paid);
    expect(paymentOf(order({ products: { type: "SINGLE", value: "AMZ-CA" } }))).not.toBe(paid);
    expect(paymentOf(order({ face_value: "10.01" }))).not.toBe(paid);
    expect(paymentOf(order({}, "CAD"))).not.toBe(paid);
  });

  it("a recipient by reference; a payout link names nobody", () => {
    const recipient = row({ distribution: "recipient", email: "", recipient_reference: "EMP-7" });
    const toRecipient = order({
      distribution_method: { type: "RECIPIENT", recipient_reference: "EMP-7" },
    });
    expect(paymentOf(toRecipient)).toBe(rowPayment(recipient));
    expect(paymentOf(order({ distribution_method: { type: "PAYOUT_LINK" } }))).toBeUndefined();
  });

  it("a choice of cards in any order, a selection template by its id", () => {
    const choice = row({ product_code: "", product_codes: ["B-1", "A-1"] });
    const shown = order({ products: { type: "MULTIPLE", values: ["A-1", "B-1"] } });
    expect(paymentOf(shown)).toBe(rowPayment(choice));
    expect(outsiderOf(shown).items[0]?.shown.product).toBe("A-1|B-1");
    const template = row({ product_code: "", selection_template_id: "PT-1" });
    const answered = order({
      products: { type: "TEMPLATE", template_id: "PT-1", values: ["A-1", "B-1"] },
    });
    expect(paymentOf(answered)).toBe(rowPayment(template));
    expect(outsiderOf(answered).items[0]?.shown.product).toBe("template PT-1");
    expect(paymentOf(answered)).not.toBe(rowPayment(choice));
  });

  it("an item of products in a shape unknown, or with no currency, pays no row", () => {
    expect(paymentOf(order({ products: { type: "BUNDLE" } }))).toBeUndefined();
    expect(paymentOf({ ...order({}), currency: null })).toBeUndefined();
  });

  it("other orders: counted; totals per currency exact, FAILED ones and no price left out", () => {
    const listed = (id: string, status: string, currency: string | null, price: string | null) =>
      unreadOutsider({ id, status, created_at: null, currency, total_price: price });
    const sorted = sortOutsiders(
      [
        listed("a", "COMPLETED", "USD", "0.10"),
        listed("b", "COMPLETED", "USD", "0.20"),
        listed("c", "COMPLETED", "JPY", "1500"),
        listed("d", "COMPLETED", "JPY", "25"),
        listed("e", "FAILED", "USD", "100.00"),
        listed("f", "COMPLETED", "KWD", "1.5"),
        listed("g", "COMPLETED", "USD", null),
      ],
      undefined,
    );
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
