// product.update messages, and the rule both stores of pushed product states keep, Redis's
// (ProductOverrides) and PostgreSQL's (PgProductOverrides): the newest state of each product
// wins, whatever the order the messages come in (docs/architecture/webhooks.md, its "Product
// updates" item). One sequence for both stores, so that they are held to the same answers.
import { expect } from "vitest";
import type { ProductUpdate } from "../../src/api/schemas.js";
import type { ProductOverrideStore } from "../../src/catalog/product-overrides.js";

/** The time the updates here are stamped around (ms). */
export const PUSHED_AT = Date.parse("2026-03-01T12:00:00Z");
const T = PUSHED_AT;

/** A product.update of `code` at `at` (ms), orderable or not. */
export function productUpdate(
  code: string,
  at: number,
  orderable: boolean,
  multiplier = "0.05",
): ProductUpdate {
  const state = { price_multiplier: multiplier, is_orderable: orderable };
  return {
    product_code: code,
    old_state: { ...state, is_orderable: !orderable },
    new_state: state,
    timestamp: new Date(at).toISOString(),
  };
}

/**
 * Records into `store` an update of A, older and as old ones (stale), a newer one, and one of B
 * with denominations, checking each answer and what is read back. Leaves A orderable at
 * PUSHED_AT + 1 (multiplier 0.0700) and B not orderable at PUSHED_AT - 5000.
 */
export async function expectNewestKept(store: ProductOverrideStore): Promise<void> {
  expect(await store.record(productUpdate("A", T, false))).toBe("applied");
  expect(await store.record(productUpdate("A", T - 1, true))).toBe("stale");
  expect(await store.record(productUpdate("A", T, true))).toBe("stale");
  expect((await store.read()).A).toMatchObject({
    at: T,
    timestamp: new Date(T).toISOString(),
    state: { is_orderable: false, price_multiplier: "0.05" },
  });
  expect(await store.record(productUpdate("A", T + 1, true, "0.0700"))).toBe("applied");
  const denominations = { type: "fixed", available_list: ["10.00", "25.00"] };
  const withDenominations = productUpdate("B", T - 5000, false);
  withDenominations.new_state = { ...withDenominations.new_state, denominations } as never;
  expect(await store.record(withDenominations)).toBe("applied");
  const all = await store.read();
  expect(all.A?.state).toEqual({ is_orderable: true, price_multiplier: "0.0700" });
  expect(all.B?.state).toEqual({ is_orderable: false, price_multiplier: "0.05", denominations });
}

/**
 * Forty updates of A, shuffled, recorded at once, every other one through `a`, the rest through
 * `b` (two connections to the same store): the newest is what both read.
 */
export async function expectNewestOfRace(
  a: ProductOverrideStore,
  b: ProductOverrideStore,
): Promise<void> {
  const times = Array.from({ length: 40 }, (_, i) => T + i * 1000).sort(() => Math.random() - 0.5);
  const results = await Promise.all(
    times.map((at, i) => (i % 2 ? a : b).record(productUpdate("A", at, at % 2000 === 0))),
  );
  expect(results).toContain("applied");
  expect((await b.read()).A?.at).toBe(T + 39_000);
  expect((await a.read()).A?.at).toBe(T + 39_000);
}
