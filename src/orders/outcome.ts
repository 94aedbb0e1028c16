import type { Order } from "../api/schemas.js";
import type { OrderPatch } from "../ledger/types.js";
import type { Logger } from "../log.js";

/**
 * An order the service made before this campaign was first imported cannot be this campaign's
 * own: its idempotency cache replayed an older order (a campaign name and rows reused from
 * another ledger). Such rows are marked `replayed`, never silently taken as paid now.
 */
export function isReplay(order: Order, campaignCreatedAt: string | undefined): boolean {
  if (!order.created_at || !campaignCreatedAt) return false;
  const made = Date.parse(order.created_at);
  const imported = Date.parse(campaignCreatedAt);
  return Number.isFinite(made) && Number.isFinite(imported) && made < imported;
}

/**
 * Ledger fields of a completed order: order id, item ids (in the order of its rows), payout
 * status (and URLs if asked).
 */
export function completedPatch(
  order: Order,
  rows: number | undefined,
  storePayoutUrls: boolean,
  campaignCreatedAt?: string,
): OrderPatch {
  // The service answers items in request order, so item i belongs to row identity i. Without
  // `rows` (an end the service reported), the ledger's script drops what is beyond its rows.
  const items = rows === undefined ? order.items : order.items.slice(0, rows);
  const statuses = new Set(order.items.map((item) => item.payout?.status).filter(Boolean));
  return {
    order_id: order.id,
    item_ids: items.map((item) => item.id),
    payout_status: [...statuses].join(",") || undefined,
    ...(storePayoutUrls ? { payout_urls: items.map((item) => item.payout?.url ?? "") } : {}),
    ...(isReplay(order, campaignCreatedAt) ? { replayed: true } : {}),
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

/** One warning per replayed order, naming the campaign: nothing is skipped silently. */
export function warnReplayed(log: Logger, campaign: string, createdAt: string | null | undefined) {
  log.warn(
    { campaign, order_created_at: createdAt },
    `campaign ${campaign}: the service replayed an order made before this campaign was imported (a campaign name and rows reused?); its rows are marked replayed`,
  );
}
