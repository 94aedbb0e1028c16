import type { OrderRequest } from "../../src/api/order-request.js";
import type { Ledger, LedgerOrder, LedgerRow } from "../../src/ledger/ledger.js";
import type { NewOrder } from "../../src/ledger/types.js";
import { orderKey } from "../../src/orders/keys.js";
import { requestFromLedger } from "../../src/orders/request.js";
import type { OrderIndex } from "../../src/webhooks/order-index.js";

/** A ledger row from file line `line` (its order number is given when it is recorded). */
export function ledgerRow(
  line: number,
  overrides: Partial<Omit<LedgerRow, "order">> = {},
): Omit<LedgerRow, "order"> {
  return {
    line,
    generation: 0,
    payload_hash: `p${line}`,
    email: `u${line}@example.com`,
    product_code: "P1",
    face_value: "10",
    currency: "USD",
    ...overrides,
  };
}

/** A queued order of `identities` (generation 0, USD 10.00 each), its key as import makes it. */
export function ledgerOrder(
  campaign: string,
  identities: string[],
  overrides: Partial<LedgerOrder> = {},
): LedgerOrder {
  const generation = overrides.generation ?? 0;
  return {
    key: orderKey(campaign, generation, identities),
    identities,
    generation,
    status: "queued",
    mode: "async",
    currency: "USD",
    face: String(1000 * identities.length),
    price: String(1000 * identities.length),
    ...overrides,
  };
}

/**
 * One-row orders for `ledger.record`, one per identity, rows from file line 2 on: recorded in
 * a new campaign, order i (0-based) gets number i + 1.
 */
export function oneRowOrders(
  campaign: string,
  identities: string[],
  options: {
    row?: (i: number) => Partial<Omit<LedgerRow, "order">>;
    order?: (i: number) => Partial<LedgerOrder>;
  } = {},
): NewOrder[] {
  return identities.map((identity, i) => ({
    order: ledgerOrder(campaign, [identity], options.order?.(i)),
    rows: [[identity, ledgerRow(i + 2, options.row?.(i))]],
  }));
}

/** The body each order of the campaign is sent with, by its key (see requestFromLedger). */
export async function recordedBodies(
  ledger: Ledger,
  campaign: string,
): Promise<Map<string, OrderRequest>> {
  const bodies = new Map<string, OrderRequest>();
  for await (const [, order] of ledger.orders.all(campaign)) {
    if (order.status === "superseded") continue;
    bodies.set(
      order.key,
      requestFromLedger(order, await ledger.orders.getRows(campaign, order.identities)),
    );
  }
  return bodies;
}

/**
 * Order 1 of campaign "c" submitted under `orderId`, as a worker with webhooks on leaves it: the
 * order-id index entry written first, the order followed a minute from now.
 */
export async function recordSubmitted(
  ledger: Ledger,
  index: OrderIndex,
  orderId: string,
): Promise<void> {
  await ledger.orders.record("c", [
    { order: { ...ledgerOrder("c", ["a"]), status: "in_flight" }, rows: [["a", ledgerRow(2)]] },
  ]);
  await ledger.orders.transition({
    campaign: "c",
    number: 1,
    from: ["in_flight"],
    to: "submitted",
    patch: { order_id: orderId },
    follow: { at: Date.now() + 60_000 },
    index: index.key,
  });
}
