/**
 * The metadata that tells which campaign and order an order on the service is
 * (docs/architecture/keys-and-exactly-once.md, "Reconciling with the service"): the campaign's
 * name and the order's idempotency key. The service's order list shows no metadata, its
 * lookup (GET /v2/order/{id}) does: `orders reconcile` reads them there. Defined here, below
 * src/orders/order-tags.ts, because the ledger does not store them: it makes them again from the
 * campaign and the order's key when it reads a tagged order (src/ledger/codec.ts).
 */
export const TAG_CAMPAIGN = "giftjobs_campaign";
export const TAG_KEY = "giftjobs_key";

/** The tags of an order of `campaign` sent under `key`. */
export function orderTags(campaign: string, key: string): Record<string, string> {
  return { [TAG_CAMPAIGN]: campaign, [TAG_KEY]: key };
}
