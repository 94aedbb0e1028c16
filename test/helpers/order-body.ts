// The body an import's order of `rows` is sent with, made as the import makes it (the rows'
// items and the order's own parts, src/orders/request.ts) rather than from the ledger: the tests
// pin it, and check that requestFromLedger gives it again.
import type { OrderRequest } from "../../src/api/order-request.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import { type CampaignInfo, itemOf, orderOwnParts } from "../../src/orders/request.js";

/** Pass rows in the packed order's identity order, as the import does. */
export function buildOrderRequest(
  rows: readonly OrderRow[],
  currency: string,
  campaign: CampaignInfo,
): OrderRequest {
  const body: OrderRequest = {
    payment_method: { type: "ACCOUNT_BALANCE", currency },
    items: rows.map(itemOf),
  };
  const { description, metadata } = orderOwnParts(rows, campaign);
  if (description !== undefined) body.description = description;
  if (metadata !== undefined) body.metadata = metadata;
  return body;
}
