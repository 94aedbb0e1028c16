import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors/user-error.js";
import {
  checkItemsPerOrder,
  MAX_ITEMS_PER_ORDER,
  OrderPacker,
  singleRowOrder,
} from "../../src/orders/packing.js";
import { packOrders } from "../helpers/packing.js";

function pairs(count: number): { identity: string; currency: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    identity: `h:${(i * 7919).toString(36)}.0`,
    currency: i % 3 === 0 ? "EUR" : "USD",
  }));
}

describe("packing", () => {
  it("checks --items-per-order against the execution mode", () => {
    expect(checkItemsPerOrder(undefined, "async")).toBe(1);
    expect(checkItemsPerOrder(200, "async")).toBe(200);
    expect(checkItemsPerOrder(1, "sync")).toBe(1);
    expect(() => checkItemsPerOrder(2, "sync")).toThrow(UserError);
    expect(() => checkItemsPerOrder(2, "sync")).toThrow(
      /--items-per-order 2 needs --execution-mode async/,
    );
    for (const bad of [0, 201, 1.5, Number.NaN]) {
      expect(() => checkItemsPerOrder(bad, "async")).toThrow(/--items-per-order must be/);
    }
  });

  it("packs deterministically, whatever the row order", () => {
    const rows = pairs(1000);
    const orders = packOrders(rows, 50);
    expect(packOrders([...rows].reverse(), 50)).toEqual(orders);
    expect(
      packOrders(
        [...rows].sort(() => 0.5 - Math.random()),
        50,
      ),
    ).toEqual(orders);
  });

  it("never mixes currencies, and never exceeds N or 200", () => {
    const rows = pairs(1001);
    const currencyOf = new Map(rows.map((r) => [r.identity, r.currency]));
    for (const n of [1, 7, MAX_ITEMS_PER_ORDER]) {
      const orders = packOrders(rows, n);
      let count = 0;
      for (const order of orders) {
        expect(order.identities.length).toBeGreaterThan(0);
        expect(order.identities.length).toBeLessThanOrEqual(n);
        for (const identity of order.identities)
          expect(currencyOf.get(identity)).toBe(order.currency);
        expect(order.identities).toEqual([...order.identities].sort());
        count += order.identities.length;
      }
      expect(count).toBe(rows.length);
    }
    const big = packOrders(rows, 200);
    expect(big.map((o) => [o.currency, o.identities.length])).toEqual([
      ["EUR", 200],
      ["EUR", 134],
      ["USD", 200],
      ["USD", 200],
      ["USD", 200],
      ["USD", 67],
    ]);
    expect(() => new OrderPacker(201)).toThrow(RangeError);
  });

  it("makes one order per row when N is 1, without holding rows", () => {
    expect(singleRowOrder("ref:x", "USD")).toEqual({ currency: "USD", identities: ["ref:x"] });
  });
});
