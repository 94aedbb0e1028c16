import type { OrderItem } from "../api/schemas.js";
import type { LedgerOrder } from "../ledger/types.js";

/** Statuses are short words (OpenAPI PayoutStatus); anything longer is cut, never stored whole. */
const MAX_STATUS = 20;

/**
 * A payout link as the ledger keeps it per row (LedgerOrder.payouts): `STATUS|expiry`, the
 * expiry in whole seconds since 1970 (empty when the link does not expire): about 20 bytes a
 * row. Never the link's URL: that stays with the service (or --store-payout-urls).
 */
export function payoutCell(payout: OrderItem["payout"]): string {
  const status = String(payout?.status ?? "")
    .replace(/[|\s]/g, "")
    .slice(0, MAX_STATUS);
  const expiry = payout?.expiry_date ? Date.parse(payout.expiry_date) : Number.NaN;
  return `${status}|${Number.isFinite(expiry) ? Math.floor(expiry / 1000) : ""}`;
}

/** A row's payout status and expiry (ISO, "" when unknown or none) as the ledger last saw them. */
export function rowPayout(
  order: LedgerOrder | undefined,
  identity: string,
): { status: string; expires_at: string } {
  const index = order ? order.identities.indexOf(identity) : -1;
  const cell = index >= 0 ? order?.payouts?.[index] : undefined;
  if (cell !== undefined) {
    const [status = "", seconds = ""] = cell.split("|");
    const expires = seconds ? new Date(Number(seconds) * 1000).toISOString() : "";
    return { status, expires_at: expires };
  }
  // Not refreshed yet: what the order's completion said, when all its links said the same.
  const known = order?.payout_status;
  return { status: known && !known.includes(",") ? known : "", expires_at: "" };
}

/** The order-level summary kept beside the cells: the statuses seen, sorted. */
export function payoutSummary(cells: readonly string[]): string | undefined {
  const statuses = new Set(cells.map((cell) => cell.split("|")[0]).filter(Boolean));
  return [...statuses].sort().join(",") || undefined;
}
