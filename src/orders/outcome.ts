import type { CompletedOrder, Order } from "../api/schemas.js";
import type { OrderPatch } from "../ledger/types.js";
import type { Logger } from "../log.js";

/**
 * An order the service made before this campaign was first imported cannot be this campaign's
 * own: its idempotency cache replayed an older order (a campaign name and rows reused from
 * another ledger). Such rows are marked `replayed`, never silently taken as paid now.
 */
function isReplay(
  order: Pick<Order, "created_at">,
  campaignCreatedAt: string | undefined,
): boolean {
  if (!order.created_at || !campaignCreatedAt) return false;
  const made = Date.parse(order.created_at);
  const imported = Date.parse(campaignCreatedAt);
  return Number.isFinite(made) && Number.isFinite(imported) && made < imported;
}

/**
 * When the service made the order, as `toISOString` writes it (the form of the campaign's
 * `created_at`, so the ledger's script compares the two as strings); undefined when unknown.
 */
export function madeAtOf(order: Pick<Order, "created_at">): string | undefined {
  const made = order.created_at ? Date.parse(order.created_at) : Number.NaN;
  return Number.isFinite(made) ? new Date(made).toISOString() : undefined;
}

/**
 * Ledger fields of a completed order: order id, item ids (in the order of its rows), payout
 * status (and the links with their expiry dates if asked: money in the open, written out only by
 * `orders links`). An order without items (the webhook's basic details) gives its id only: its
 * items are read later, by GET /v2/order/{id} (`orders payouts`).
 */
export function completedPatch(
  order: CompletedOrder,
  rows: number | undefined,
  storePayoutUrls: boolean,
  campaignCreatedAt?: string,
): OrderPatch {
  // The service answers items in request order, so item i belongs to row identity i. Without
  // `rows` (an end the service reported), the ledger's script drops what is beyond its rows.
  const all = order.items ?? [];
  const items = rows === undefined ? all : all.slice(0, rows);
  const statuses = new Set(all.map((item) => item.payout?.status).filter(Boolean));
  return {
    order_id: order.id,
    item_ids: order.items ? items.map((item) => item.id) : undefined,
    payout_status: [...statuses].join(",") || undefined,
    ...(storePayoutUrls && order.items ? payoutLinks(items) : {}),
    ...(isReplay(order, campaignCreatedAt) ? { replayed: true } : {}),
    error_type: null,
    error_message: null,
  };
}

/** The payout links of the items, and their expiry dates, in item order ("" where none). */
function payoutLinks(items: Order["items"]): Pick<OrderPatch, "payout_urls" | "payout_expiries"> {
  return {
    payout_urls: items.map((item) => item.payout?.url ?? ""),
    payout_expiries: items.map((item) => item.payout?.expiry_date ?? ""),
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
