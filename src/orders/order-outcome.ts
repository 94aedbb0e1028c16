import type { Order } from "../api/schemas.js";
import type { LedgerOrder } from "./ledger.js";

/** Ledger fields of a completed order: order id, item id per row, payout status (and URLs if asked). */
export function completedPatch(
  order: Order,
  identities: string[],
  storePayoutUrls: boolean,
): Partial<LedgerOrder> {
  const itemIds: Record<string, string> = {};
  const payoutUrls: Record<string, string> = {};
  // The service answers items in request order, so item i belongs to row identity i.
  order.items.forEach((item, i) => {
    const identity = identities[i];
    if (!identity) return;
    itemIds[identity] = item.id;
    if (storePayoutUrls && item.payout?.url) payoutUrls[identity] = item.payout.url;
  });
  const statuses = new Set(order.items.map((item) => item.payout?.status).filter(Boolean));
  return {
    order_id: order.id,
    item_ids: itemIds,
    payout_status: [...statuses].join(",") || undefined,
    ...(storePayoutUrls ? { payout_urls: payoutUrls } : {}),
    error_type: null,
    error_message: null,
  };
}

/** The item index a 422 names in its details (`location: ["body", "items", 3, ...]`), if one. */
export function failedItemIndex(details: { location?: (string | number)[] }[]): number | undefined {
  const indexes = new Set<number>();
  for (const detail of details) {
    const location = detail.location ?? [];
    const at = location.indexOf("items");
    const index = at >= 0 ? Number(location[at + 1]) : Number.NaN;
    if (Number.isInteger(index)) indexes.add(index);
  }
  return indexes.size === 1 ? [...indexes][0] : undefined;
}
