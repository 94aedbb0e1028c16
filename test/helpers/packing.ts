import { OrderPacker, type PackedOrder } from "../../src/orders/packing.js";

/** Packs `{identity, currency}` pairs in one call, through OrderPacker as the import does. */
export function packOrders(
  rows: Iterable<{ identity: string; currency: string }>,
  itemsPerOrder: number,
): PackedOrder[] {
  const packer = new OrderPacker(itemsPerOrder);
  for (const row of rows) packer.add(row.identity, row.currency);
  return [...packer.orders()];
}
